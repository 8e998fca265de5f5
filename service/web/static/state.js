// The state of a table page and of a replay, apart from drawing them: plain data and pure
// functions from a state and what happened to the next state (the same object when nothing
// changed). The pages draw what these hold.

/**
 * @typedef {import("../../../clients/typescript/src/generated/api").components["schemas"]} Schemas
 * @typedef {Schemas["SeatView"] | Schemas["PublicView"]} View
 * @typedef {Schemas["SeatViewResponse"] | Schemas["PublicViewResponse"]} ViewResponse
 * @typedef {Schemas["Decision"]} Decision
 * @typedef {Schemas["Command"]} Command
 * @typedef {Schemas["CommandRequest"]} CommandRequest
 * @typedef {Schemas["TurnSignal"]} TurnSignal
 * @typedef {Schemas["FeedItem"]} FeedItem
 * @typedef {{ version: number, view: View, etag: string }} Shown
 * @typedef {{ state: "connecting" | "live" | "reconnecting" | "ended" | "failed", text: string }} Live
 * @typedef {{ state: string, error?: { words: string } }} StreamStatus
 * @typedef {{ shown: Shown | null, live: Live, log: FeedItem[], decisionKey: string | null }} TableState
 */

export const LOG_KEPT = 80;
/** @type {Live} */
const OVER = { state: "ended", text: "game over" };

/** @returns {TableState} */
export function tableState() {
  return { shown: null, live: { state: "connecting", text: "connecting…" }, log: [], decisionKey: null };
}

// A view read (GET .../view): shown unless the table already shows a newer version (a turn signal
// drawn while the read was on its way). A 304 keeps the table.
/**
 * @param {TableState} state
 * @param {(ViewResponse & { _etag?: string | null }) | { notModified: true }} read
 * @returns {TableState}
 */
export function viewRead(state, read) {
  if ("notModified" in read) return state;
  if (state.shown && read.version < state.shown.version) return state;
  return showing(state, { version: read.version, view: read.view, etag: read._etag || `"${read.version}"` });
}

// A turn signal (a seat stream's `decision` event) carries the seat's view at its version.
/**
 * @param {TableState} state
 * @param {TurnSignal | null | undefined} turn
 * @returns {TableState}
 */
export function turnSignalled(state, turn) {
  if (!turn || !turn.view) return state;
  if (state.shown && state.shown.version > turn.game_version) return state;
  return showing(state, { version: turn.game_version, view: turn.view, etag: `"${turn.game_version}"` });
}

// A view that shows the game over ends the table's live state, whatever the stream is doing.
/**
 * @param {TableState} state
 * @param {Shown} shown
 * @returns {TableState}
 */
function showing(state, shown) {
  return { ...state, shown, live: shown.view.step === "over" ? OVER : state.live };
}

// An event of the stream, kept for the log (the newest LOG_KEPT).
/**
 * @param {TableState} state
 * @param {FeedItem} item
 * @returns {TableState}
 */
export function eventSeen(state, item) {
  return { ...state, log: [...state.log.slice(-(LOG_KEPT - 1)), item] };
}

// The stream's status, in the words the header shows; a game over stays over (a stream that
// reconnects meanwhile is only told so by its `end` event).
/**
 * @param {TableState} state
 * @param {StreamStatus} status
 * @returns {TableState}
 */
export function streamStatus(state, status) {
  if (state.live.state === "ended") return state;
  /** @type {Live} */
  const live =
    status.state === "live"
      ? { state: "live", text: "● live" }
      : status.state === "ended"
        ? OVER
        : status.state === "failed"
          ? { state: "failed", text: `stream refused: ${status.error.words}` }
          : { state: "reconnecting", text: "reconnecting…" };
  return { ...state, live };
}

// Whether the page reads the view by itself: only while the stream does not bring the table.
/** @param {TableState} state */
export function polls(state) {
  return state.live.state !== "live" && state.live.state !== "ended";
}

// The decision on screen: the same decision keeps its panel (and the person's choices) while the
// others move; only the bag count in it follows the table.
/** @param {Decision | null | undefined} decision */
export function decisionKey(decision) {
  return decision ? JSON.stringify({ ...decision, bag: null }) : null;
}

// The body of the command answering ``decision`` with ``command``: one command id per answer
// (``ids`` keeps them, by decision and answer), so that a resend of the same answer is the same
// command and the server applies it at most once; the decision_id says which decision it answers.
/**
 * @param {Map<string, string>} ids
 * @param {Decision} decision
 * @param {Command} command
 * @param {() => string} freshId
 * @returns {CommandRequest}
 */
export function commandFor(ids, decision, command, freshId) {
  const key = JSON.stringify([decision.decision_id, command]);
  if (!ids.has(key)) ids.set(key, freshId());
  return { command_id: ids.get(key), decision_id: decision.decision_id, command };
}

// ---- a replay: which step of the log is on screen, and from whose point of view

/** @typedef {{ pos: number, last: number, pov: string }} ReplayCursor */

/**
 * @param {number} count the events of the log
 * @returns {ReplayCursor}
 */
export function replayCursor(count) {
  return { pos: 0, last: count - 1, pov: "public" };
}
/**
 * @param {ReplayCursor} cur
 * @param {number} i
 * @returns {ReplayCursor}
 */
export function stepTo(cur, i) {
  return { ...cur, pos: Math.max(0, Math.min(cur.last, i)) };
}
/**
 * @param {ReplayCursor} cur
 * @param {string} pov "public" or a seat's number
 * @returns {ReplayCursor}
 */
export function seenBy(cur, pov) {
  return { ...cur, pov };
}
// the first of ``stops`` (event positions, ascending) after the step on screen, or the last step
/**
 * @param {ReplayCursor} cur
 * @param {number[]} stops
 */
export function nextStop(cur, stops) {
  return stops.find((k) => k > cur.pos) ?? cur.last;
}
// the last of ``stops`` before the step on screen, or the first step
/**
 * @param {ReplayCursor} cur
 * @param {number[]} stops
 */
export function prevStop(cur, stops) {
  return [...stops].reverse().find((k) => k < cur.pos) ?? 0;
}

/**
 * The decision a seat's view says the seat owes (none in a spectator's view).
 * @param {View} view
 * @returns {Decision | null}
 */
export function owed(view) {
  return "decision" in view ? view.decision : null;
}
