package store

import "slices"

// migrations[i] brings a database from user_version i to i+1. Append only:
// a released step is never edited.
var migrations = []string{schemaV1, schemaV2, schemaStalls, schemaTruth, schemaVerdictSkip, schemaClock, schemaNotSampled, schemaSummaryID, schemaSignals, schemaRuntime, schemaBench, schemaWire, schemaDrops, schemaBenchDims, schemaChat, schemaResume, schemaRanking, schemaDrain, schemaChatStrategy}

// schemaVersion is the user_version of a database created by this binary.
var schemaVersion = len(migrations)

// minReadVersion is the oldest schema a reader opens without migrating it
// (soak report, export and compare open read-only, so a run recorded by an
// earlier soak is read as it is): version 4, schemaTruth. What later steps
// added reads as not recorded: no clock readings before version 6.
const (
	minReadVersion = 4
	clockVersion   = 6 // schemaClock
	// notSampledVersion is schemaNotSampled: before it, a worker's
	// sampled_cpu_s of 0 meant that no sample was taken.
	notSampledVersion = 7
)

// Layout notes (a 24 h run must stay well under 200 MB):
//   - samples and stream_samples are WITHOUT ROWID with sec first in the key,
//     so each second's rows append at the right edge of the b-tree and pages
//     stay full.
//   - stream_samples refer to a stream by a small integer (streams.id) instead
//     of repeating lib, group and name; streams.last_sec finds the latest row.
//   - CPU times are integer milliseconds and CPU % an integer in hundredths of
//     a percent: integers of 2–4 bytes instead of 8-byte floats.
//   - NULL (zero bytes on disk) marks the half of a sample that is missing.
const schemaV1 = `
CREATE TABLE runs (
	id            TEXT PRIMARY KEY,
	name          TEXT NOT NULL,
	target        TEXT NOT NULL,
	profile_text  TEXT NOT NULL,
	started_ns    INTEGER,
	planned_s     REAL NOT NULL,
	ended_ns      INTEGER,
	status        TEXT NOT NULL,
	host_json     TEXT NOT NULL,
	go_version    TEXT NOT NULL,
	settings_json TEXT NOT NULL
);

CREATE TABLE workers (
	lib           TEXT PRIMARY KEY,
	module        TEXT NOT NULL,
	version       TEXT NOT NULL,
	pid           INTEGER NOT NULL,
	started_ns    INTEGER,
	ended_ns      INTEGER,
	exit_code     INTEGER NOT NULL,
	rusage_user_s REAL NOT NULL,
	rusage_sys_s  REAL NOT NULL,
	sampled_cpu_s REAL NOT NULL,
	maxrss        INTEGER NOT NULL,
	lat_count     INTEGER NOT NULL, -- whole-run latency, from the merged histogram
	lat_p50_us    INTEGER NOT NULL,
	lat_p99_us    INTEGER NOT NULL,
	lat_max_us    INTEGER NOT NULL
);

-- One row per worker per second. Worker half (from the worker's frame):
-- msgs .. lat_max_us; process half (sampled by pid): rss .. threads.
CREATE TABLE samples (
	sec              INTEGER NOT NULL, -- seconds since the run started
	lib              TEXT NOT NULL CHECK (lib <> ''),
	ts_ns            INTEGER NOT NULL,
	msgs             INTEGER,
	bytes            INTEGER,
	msgs_total       INTEGER,
	bytes_total      INTEGER,
	goroutines       INTEGER,
	heap_bytes       INTEGER,
	conns_up         INTEGER,
	reconnects_total INTEGER,
	lost_total       INTEGER,
	dup_total        INTEGER,
	lat_p50_us       INTEGER,
	lat_p99_us       INTEGER,
	lat_max_us       INTEGER,
	rss              INTEGER,
	cpu_user_ms      INTEGER, -- cumulative
	cpu_sys_ms       INTEGER, -- cumulative
	cpu_pct100       INTEGER, -- CPU % of one core × 100
	fds              INTEGER,
	threads          INTEGER,
	PRIMARY KEY (sec, lib)
) WITHOUT ROWID;

CREATE TABLE streams (
	id       INTEGER PRIMARY KEY,
	lib      TEXT NOT NULL CHECK (lib <> ''),
	slot     INTEGER NOT NULL,
	grp      TEXT NOT NULL,
	stream   TEXT NOT NULL CHECK (stream <> ''),
	last_sec INTEGER,
	UNIQUE (lib, grp, slot, stream)
);

-- One row per subscription per stream-sample interval; totals are cumulative.
CREATE TABLE stream_samples (
	sec            INTEGER NOT NULL,
	sid            INTEGER NOT NULL REFERENCES streams (id),
	msgs_total     INTEGER NOT NULL,
	bytes_total    INTEGER NOT NULL,
	lost_total     INTEGER NOT NULL,
	dup_total      INTEGER NOT NULL,
	ooo_total      INTEGER NOT NULL,
	max_silence_ms INTEGER NOT NULL,
	last_seq       INTEGER NOT NULL,
	PRIMARY KEY (sec, sid)
) WITHOUT ROWID;

CREATE TABLE events (
	id     INTEGER PRIMARY KEY,
	lib    TEXT NOT NULL, -- '' for run-wide events
	ts_ns  INTEGER NOT NULL,
	sec    REAL NOT NULL,
	kind   TEXT NOT NULL CHECK (kind <> ''),
	slot   INTEGER NOT NULL,
	grp    TEXT NOT NULL,
	stream TEXT NOT NULL,
	code   INTEGER NOT NULL,
	detail TEXT NOT NULL,
	dur_ms REAL NOT NULL
);

CREATE TABLE host_samples (
	sec        INTEGER PRIMARY KEY,
	ts_ns      INTEGER NOT NULL,
	load1      REAL NOT NULL,
	load5      REAL NOT NULL,
	load15     REAL NOT NULL,
	cpu_pct    REAL NOT NULL,
	steal_pct  REAL NOT NULL,
	iowait_pct REAL NOT NULL,
	mem_used   INTEGER NOT NULL,
	mem_avail  INTEGER NOT NULL
);

-- What the replay server sent, per tag (e.g. connection group) and stream.
CREATE TABLE server_counts (
	tag       TEXT NOT NULL,
	stream    TEXT NOT NULL,
	sent      INTEGER NOT NULL,
	bytes     INTEGER NOT NULL,
	first_seq INTEGER NOT NULL,
	last_seq  INTEGER NOT NULL,
	PRIMARY KEY (tag, stream)
) WITHOUT ROWID;

CREATE TABLE summary (
	metric TEXT NOT NULL,
	lib    TEXT NOT NULL,
	value  TEXT NOT NULL,
	num    REAL,
	ord    INTEGER NOT NULL,
	PRIMARY KEY (metric, lib)
) WITHOUT ROWID;
`

// schemaV2: threshold verdicts. The HTML report reads them with DB.Verdicts
// (one row per library and checked threshold; broken = 1 marks a breach).
const schemaV2 = `
CREATE TABLE verdicts (
	lib       TEXT NOT NULL,
	threshold TEXT NOT NULL, -- the profile key under thresholds:, e.g. max_lost
	value     REAL NOT NULL, -- measured, in unit
	lim       REAL NOT NULL, -- the profile's limit, in unit
	unit      TEXT NOT NULL, -- messages, s, bytes, %, count
	broken    INTEGER NOT NULL, -- 1 when value > lim
	ord       INTEGER NOT NULL, -- display order
	PRIMARY KEY (lib, threshold)
) WITHOUT ROWID;
`

// schemaStalls: per-subscription stall count and whether the subscription was
// stalled at that sample (a stream that never sends, such as a retired one,
// stays stalled), so a silent subscription is never read as a healthy one.
const schemaStalls = `
ALTER TABLE stream_samples ADD COLUMN stalls_total INTEGER NOT NULL DEFAULT 0;
ALTER TABLE stream_samples ADD COLUMN stalled INTEGER NOT NULL DEFAULT 0;
`

// schemaNotSampled: a worker of which no /proc sample was taken (a run
// interrupted before the first one) is marked -1 instead of 0, so that a
// short worker whose samples rounded to 0 ticks reads as 0.00, not as "not
// measured".
const schemaNotSampled = `UPDATE workers SET sampled_cpu_s = -1 WHERE sampled_cpu_s = 0;`

// schemaSummaryID: each row of the end table names its measure by the
// catalogue's id (internal/measure), so that a renamed row keeps its unit,
// its direction and its match in compare. Rows stored before it have an empty id
// and are matched by their name.
const schemaSummaryID = `ALTER TABLE summary ADD COLUMN id TEXT NOT NULL DEFAULT '';`

// summaryIDVersion is the first version with summary.id (found by position,
// so that the step may move while unreleased).
var summaryIDVersion = slices.Index(migrations, schemaSummaryID) + 1

// schemaRuntime: the Go runtime settings each worker ran with (GOMAXPROCS,
// GOGC, GOMEMLIMIT, as the worker read them back); empty before it.
const schemaRuntime = `ALTER TABLE workers ADD COLUMN runtime TEXT NOT NULL DEFAULT '';`

// runtimeVersion is the first version with workers.runtime (by position).
var runtimeVersion = slices.Index(migrations, schemaRuntime) + 1

// schemaBench: a database of soak bench (out/<bench-id>/soak.db). runs.kind
// says what the database holds ('soak', every database before it, or
// 'bench'); bench_results holds one row per client run of the bench, the
// warm-up round (round 0) included, in the order they ran.
const schemaBench = `
ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'soak';

CREATE TABLE bench_results (
	seq           INTEGER PRIMARY KEY, -- the order the runs ran in
	scenario      TEXT NOT NULL,
	path          TEXT NOT NULL,
	lib           TEXT NOT NULL,
	version       TEXT NOT NULL,
	round         INTEGER NOT NULL, -- 0: the warm-up, not counted
	valid         INTEGER NOT NULL,
	reason        TEXT NOT NULL,    -- why not valid
	err           TEXT NOT NULL,
	msgs          INTEGER NOT NULL,
	bytes         INTEGER NOT NULL, -- payload bytes
	sent_msgs     INTEGER NOT NULL,
	sent_bytes    INTEGER NOT NULL,
	wall_ns       INTEGER NOT NULL,
	user_ns       INTEGER NOT NULL,
	sys_ns        INTEGER NOT NULL,
	syscr         INTEGER NOT NULL,
	rchar         INTEGER NOT NULL,
	maxrss_kib    INTEGER NOT NULL,
	mallocs       INTEGER NOT NULL,
	lost          INTEGER NOT NULL,
	dup           INTEGER NOT NULL,
	rcvbuf        INTEGER NOT NULL,
	runtime       TEXT NOT NULL     -- GOMAXPROCS=… GOGC=… GOMEMLIMIT=…
);
`

// benchVersion is the first version with runs.kind and bench_results (by
// position).
var benchVersion = slices.Index(migrations, schemaBench) + 1

// schemaWire: per worker second, the WebSocket frame bytes read (compressed
// as they came) beside the payload bytes, NULL before it; per slot the total
// read over its connections (0 before it); per replay connection what the
// server wrote.
const schemaWire = `
ALTER TABLE samples ADD COLUMN wire_bytes INTEGER;
ALTER TABLE samples ADD COLUMN wire_bytes_total INTEGER;
ALTER TABLE slot_dials ADD COLUMN wire_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bench_results ADD COLUMN wire_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bench_results ADD COLUMN extensions TEXT NOT NULL DEFAULT '';

-- The replay server's frame bytes per connection (tag lib/slot/attempt).
CREATE TABLE server_wire (
	tag        TEXT PRIMARY KEY,
	wire_bytes INTEGER NOT NULL, -- written after the upgrade, close frames included
	readable   INTEGER NOT NULL, -- of those, what the client could read: all, or those before its close frame came
	extensions TEXT NOT NULL     -- the Sec-WebSocket-Extensions answer
) WITHOUT ROWID;
`

// wireVersion is the first version with samples.wire_bytes (by position).
var wireVersion = slices.Index(migrations, schemaWire) + 1

// schemaDrops: per server second of a side: server run, the slow clients
// the server dropped in it (its /_stats drops); NULL in client runs and
// before it.
const schemaDrops = `ALTER TABLE samples ADD COLUMN drops INTEGER;`

// dropsVersion is the first version with samples.drops (by position).
var dropsVersion = slices.Index(migrations, schemaDrops) + 1

// schemaBenchDims: a client bench's row as its dimensions: scenario (the
// firehose scenario's name), encoding (” when the bench had no encoding
// dimension: json) and compression (off, on, no_context_takeover). Rows
// written before it have compression ” and their scenario column holds the
// whole row label, scenario[-encoding][+deflate|+deflate_nct]: the reader
// splits it (measure.ParseRow).
const schemaBenchDims = `
ALTER TABLE bench_results ADD COLUMN encoding TEXT NOT NULL DEFAULT '';
ALTER TABLE bench_results ADD COLUMN compression TEXT NOT NULL DEFAULT '';
`

// benchDimsVersion is the first version with bench_results.encoding (by
// position).
var benchDimsVersion = slices.Index(migrations, schemaBenchDims) + 1

// squeezedChat selects the rows a server bench (soak bench -side server)
// wrote into bench_results before chat_results: scenario "chat N=<n>", path
// "server", msgs the clients' deliveries, sent_msgs the server's, user_ns and
// sys_ns the server's CPU, maxrss_kib its peak RSS, wall_ns the load's timed
// part.
const squeezedChat = `path = 'server' AND scenario LIKE 'chat N=%'`

// chatFromSqueezed reads a squeezed row as chat_results' columns, in
// chatColumns order; what such a row did not record is NULL.
const chatFromSqueezed = `SELECT lib, CAST(substr(scenario, 8) AS INTEGER), round, valid, reason, err,
	NULL, NULL, NULL, msgs, sent_msgs, wall_ns, user_ns, sys_ns, maxrss_kib,
	NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
	FROM bench_results WHERE ` + squeezedChat + ` ORDER BY seq`

// chatColumns are chat_results' columns after seq, in insert order.
const chatColumns = `lib, clients, round, valid, reason, err, rounds, per_round, sent, deliveries, server_deliveries,
	wall_ns, server_user_ns, server_sys_ns, server_maxrss_kib, server_writes, drops,
	client_user_ns, client_sys_ns, client_maxrss_kib, client_reads, lat_p50_us, lat_p99_us, lat_max_us`

// schemaChat: the server bench's runs (soak bench -side server) in a table
// of their own, one row per load run against one chat server, the warm-up
// round included, in the order they ran. The rows such a bench wrote into
// bench_results before it move here; the columns they did not record are
// NULL (not measured).
const schemaChat = `
CREATE TABLE chat_results (
	seq               INTEGER PRIMARY KEY, -- the order the runs ran in
	lib               TEXT NOT NULL,    -- the server's library
	clients           INTEGER NOT NULL, -- the room size N
	round             INTEGER NOT NULL, -- 0: the warm-up, not counted
	valid             INTEGER NOT NULL, -- deliveries equal the server's count of writes and what the rounds make
	reason            TEXT NOT NULL,    -- why not valid
	err               TEXT NOT NULL,    -- the load process's own error
	rounds            INTEGER,          -- load rounds of clients × clients × per_round deliveries
	per_round         INTEGER,          -- messages each client sends a round
	sent              INTEGER,          -- messages the clients sent
	deliveries        INTEGER NOT NULL, -- broadcasts the clients received
	server_deliveries INTEGER NOT NULL, -- the server's own count of broadcasts written
	wall_ns           INTEGER NOT NULL, -- the timed part, on the load client
	server_user_ns    INTEGER NOT NULL, -- the server's getrusage over the timed part
	server_sys_ns     INTEGER NOT NULL,
	server_maxrss_kib INTEGER NOT NULL,
	server_writes     INTEGER,          -- the server's write syscalls (syscw of /proc/self/io)
	drops             INTEGER,          -- clients the server dropped (queue full)
	client_user_ns    INTEGER,          -- the load process's getrusage over the timed part
	client_sys_ns     INTEGER,
	client_maxrss_kib INTEGER,
	client_reads      INTEGER,          -- the load client's socket reads
	lat_p50_us        REAL,             -- broadcast latency, send to receipt at each client
	lat_p99_us        REAL,
	lat_max_us        REAL
);

INSERT INTO chat_results (` + chatColumns + `) ` + chatFromSqueezed + `;
DELETE FROM bench_results WHERE ` + squeezedChat + `;
`

// chatVersion is the first version with chat_results (by position).
var chatVersion = slices.Index(migrations, schemaChat) + 1

// schemaChatStrategy: a server bench run's write strategy (chat "plain" or
// "best"), empty for the runs recorded before servers had strategies. And a
// client bench run's server side: the firehose's CPU while it sent to the
// run's connection and its time encoding the messages (NULL: not measured,
// a run recorded before; encode 0: the batch was encoded once beforehand).
const schemaChatStrategy = `
ALTER TABLE chat_results ADD COLUMN strategy TEXT NOT NULL DEFAULT '';
ALTER TABLE bench_results ADD COLUMN server_user_ns INTEGER;
ALTER TABLE bench_results ADD COLUMN server_sys_ns INTEGER;
ALTER TABLE bench_results ADD COLUMN server_encode_ns INTEGER;
`

// chatStrategyVersion is the first version with chat_results.strategy.
var chatStrategyVersion = slices.Index(migrations, schemaChatStrategy) + 1
