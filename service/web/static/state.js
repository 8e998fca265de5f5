// The state of a table page and of a replay, apart from drawing them: plain data and pure
// functions from a state and what happened to the next state (the same object when nothing
// changed). The pages draw what these hold.

/**
 * @typedef {import("../../../clients/typescript/src/generated/api").components["schemas"]} Schemas
 * @typedef {{ version: number, view: any, etag: string | null }} Shown
 * @typedef {{ state: "connecting" | "live" | "reconnecting" | "ended" | "failed", text: string }} Live
 * @typedef {{ shown: Shown | null, live: Live, log: any[], decisionKey: string | null }} TableState
 */

export const LOG_KEPT = 80;

/** @returns {TableState} */
export function tableState() {
  return { shown: null, live: { state: "connecting", text: "connecting…" }, log: [], decisionKey: null };
}

// A view read (GET .../view): shown unless the table already shows a newer version (a turn signal
// drawn while the read was on its way). A 304 keeps the table.
export function viewRead(state, read) {
  if (read.notModified) return state;
  if (state.shown && read.version < state.shown.version) return state;
  return { ...state, shown: { version: read.version, view: read.view, etag: read._etag || `"${read.version}"` } };
}

// A turn signal (a seat stream's `decision` event) carries the seat's view at its version.
export function turnSignalled(state, turn) {
  if (!turn || !turn.view) return state;
  if (state.shown && state.shown.version > turn.game_version) return state;
  return { ...state, shown: { version: turn.game_version, view: turn.view, etag: `"${turn.game_version}"` } };
}

// An event of the stream, kept for the log (the newest LOG_KEPT).
export function eventSeen(state, item) {
  return { ...state, log: [...state.log.slice(-(LOG_KEPT - 1)), item] };
}

// The stream's status, in the words the header shows.
export function streamStatus(state, status) {
  const live =
    status.state === "live"
      ? { state: "live", text: "● live" }
      : status.state === "ended"
        ? { state: "ended", text: "game over" }
        : status.state === "failed"
          ? { state: "failed", text: `stream refused: ${status.error.words}` }
          : { state: "reconnecting", text: "reconnecting…" };
  return { ...state, live };
}

// Whether the page reads the view by itself: only while the stream does not bring the table.
export function polls(state) {
  return state.live.state !== "live" && state.live.state !== "ended";
}

// The decision on screen: the same decision keeps its panel (and the person's choices) while the
// others move; only the bag count in it follows the table.
export function decisionKey(decision) {
  return decision ? JSON.stringify({ ...decision, bag: null }) : null;
}

// The body of the command answering ``decision`` with ``command``: one command id per answer
// (``ids`` keeps them, by decision and answer), so that a resend of the same answer is the same
// command and the server applies it at most once; the decision_id says which decision it answers.
export function commandFor(ids, decision, command, freshId) {
  const key = JSON.stringify([decision.decision_id, command]);
  if (!ids.has(key)) ids.set(key, freshId());
  return { command_id: ids.get(key), decision_id: decision.decision_id, command };
}

// ---- a replay: which step of the log is on screen, and from whose point of view

/** @typedef {{ pos: number, last: number, pov: string }} ReplayCursor */

/** @returns {ReplayCursor} */
export function replayCursor(count) {
  return { pos: 0, last: count - 1, pov: "public" };
}
export function stepTo(cur, i) {
  return { ...cur, pos: Math.max(0, Math.min(cur.last, i)) };
}
export function seenBy(cur, pov) {
  return { ...cur, pov };
}
// the first of ``stops`` (event positions, ascending) after the step on screen, or the last step
export function nextStop(cur, stops) {
  return stops.find((k) => k > cur.pos) ?? cur.last;
}
// the last of ``stops`` before the step on screen, or the first step
export function prevStop(cur, stops) {
  return [...stops].reverse().find((k) => k < cur.pos) ?? 0;
}
