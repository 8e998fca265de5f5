"""Names vulture reports as unused that are used, by a framework or by name (``vulture`` reads
this file with the packages; see ``[tool.vulture]`` in pyproject.toml). Each entry says who uses
it. Anything vulture reports that is not here is dead code: delete it rather than add it here.

Never imported or run: vulture only reads the names below.
"""

# ruff: noqa
# type: ignore

# Flask, Werkzeug, gunicorn and RQ read these attributes and module globals themselves
_.strict_slashes  # service/app.py: Flask's url_map setting
_.request_class  # service/http.py: Flask's request class
_.regex  # service/routing.py: Werkzeug URL converters
logconfig_dict  # service/gunicorn_conf.py: gunicorn settings
accesslog  # service/gunicorn_conf.py
child_exit  # service/gunicorn_conf.py: gunicorn server hook
on_starting  # service/gunicorn_conf.py: gunicorn server hook
post_worker_init  # service/gunicorn_conf.py: gunicorn server hook
worker_int  # service/gunicorn_conf.py: gunicorn server hook
pytest_collection_modifyitems  # tests/conftest.py: pytest hook
_.max_connection_wait_time  # workers/process.py: RQ worker setting
_.death_penalty_class  # tests/workers/conftest.py: RQ worker setting
_.test_client_class  # tests/service/conftest.py: Flask's test client class
hello_app  # bench/api.py: started by gunicorn as "bench.api:hello_app()"
sse_anchor_app  # bench/api.py: started by gunicorn as "bench.api:sse_anchor_app()"
healthz  # bench/api.py sse_anchor_app: a Flask route
play_decision  # workers/jobs.py: the RQ job, enqueued by name (workers/dispatch.py JOB_FUNC)

# marshmallow: schema options and fields are read from the class, _serialize by the Field base
_.Meta
_._serialize
_.development  # service/schemas/commands.py
_.current_version  # service/schemas/responses.py (ProblemSchema: a conflict's version)
_.select
_.reassign
_.as_
_.on_top
_.bankers
_.expansions  # service/schemas/requests.py
_.increment
_.bank_max
_.instance  # service/schemas/responses.py
_.origin  # service/schemas/responses.py (VerdictSchema)
_.current_decision_id
_.current_decision_kind
_.max_bytes
_.retry_after
_.next_deadline
_.bot_pace_seconds  # service/schemas: the create-game field and the game resource's
_.token_type
_.next_after
_.first_bad_event
_.alg
_.home_worlds
_.revoked_at
_.exclude  # service/api/challenges.py: marshmallow Meta option
_.challenged  # service/api/challenges.py (ChallengeSchema)
_.challenge_secret  # service/api/challenges.py (ChallengeSchema)
_.expires_at
_.incoming
_.outgoing
_.joined_at  # service/schemas/responses.py (EntrantSchema)
_.left_at  # service/schemas/responses.py (EntrantSchema, MyLadderSchema)

# called by name: getattr(self, "_" + kind) in bots/random_bot.py
_._develop
_._settle

# read by lru_cache as part of the key: a changed openapi.yaml renders a new page
mtime  # service/api/docs.py _page

# dataclass fields: serialized with the object (asdict, to_dict)
_.played_on  # workers/turns.py Outcome, in each job's result
_.number  # engine/catalogue.py Faction

# names of a tuple that a test unpacks and uses only in part
other_gid  # tests/service/test_auth.py
v0  # tests/service/test_commands.py

# called by werkzeug/io: request.get_data() reads the body stream with readall()

# http.server's hooks, read by BaseHTTPRequestHandler / socketserver (bench/example_bots.py Recorder)
_.daemon_threads
_.protocol_version
_.log_message
_.close_connection
_.do_GET
_.do_POST
_.do_PUT
_.do_PATCH
_.do_DELETE
_.do_HEAD

# Ambition objectives (engine/ambition/components.py): the talent counters an objective awards,
# read by the objectives rules
_.talents
