package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestBenchRoundTrip: a bench database says it is one and gives its results
// back as written, in order; a database of the version before the bench
// tables reads as a soak without results.
func TestBenchRoundTrip(t *testing.T) {
	db, path := open(t)
	if err := db.CreateRun(Run{ID: "bench-x", Name: "bench", Status: "done", Settings: map[string]string{"gws": "m@v1"}}); err != nil {
		t.Fatal(err)
	}
	if k, err := db.Kind(); err != nil || k != KindSoak {
		t.Errorf("kind before SetKind %q, %v; want soak", k, err)
	}
	if err := db.SetKind(KindBench); err != nil {
		t.Fatal(err)
	}
	want := []BenchResult{
		{Scenario: "aggTrade", Encoding: "msgpack", Compression: "on", Path: "full", Lib: "gws", Version: "v1", Round: 0, Valid: true, Msgs: 300, Bytes: 60000,
			SentMsgs: 300, SentBytes: 60000, WallNS: 1e6, UserNS: 5e5, SysNS: 2e5, Syscr: 10, Rchar: 61000, MaxRSSKiB: 9000,
			Mallocs: 1 << 40, RcvBuf: 131072, Runtime: "GOMAXPROCS=2 GOGC=100 GOMEMLIMIT=off"},
		{Scenario: "aggTrade", Compression: "off", Path: "bare", Lib: "coder", Round: 1, Reason: "received 1 messages", Err: "boom", Lost: 2, Dup: 1},
	}
	if err := db.WriteBenchResults(want); err != nil {
		t.Fatal(err)
	}
	ro := reopen(t, db, path)
	if k, err := ro.Kind(); err != nil || k != KindBench {
		t.Errorf("kind %q, %v; want bench", k, err)
	}
	got, err := ro.BenchResults()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("bench results %+v, %v\nwant %+v", got, err, want)
	}

	// A database of the version before schemaBench.
	old := filepath.Join(t.TempDir(), "soak.db")
	raw, err := sql.Open("sqlite3", dsn(old, url.Values{"_journal_mode": {"DELETE"}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:benchVersion-1] {
		if _, err := raw.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Exec(fmt.Sprintf(`PRAGMA user_version = %d;
		INSERT INTO runs (id, name, target, profile_text, planned_s, status, host_json, go_version, settings_json)
		VALUES ('r', 'n', 't', '', 1, 'done', '{}', 'go', '{}')`, benchVersion-1)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	ro2, err := OpenReadOnly(old)
	if err != nil {
		t.Fatal(err)
	}
	defer ro2.Close()
	if k, err := ro2.Kind(); err != nil || k != KindSoak {
		t.Errorf("old database: kind %q, %v; want soak", k, err)
	}
	if rs, err := ro2.BenchResults(); err != nil || rs != nil {
		t.Errorf("old database: bench results %v, %v; want none", rs, err)
	}
	// Migrated, it is still a soak.
	w, err := Open(old)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if k, err := w.Kind(); err != nil || k != KindSoak {
		t.Errorf("migrated old database: kind %q, %v; want soak", k, err)
	}
}

// TestChatRoundTrip: a server bench's results come back as written, in
// order, none of them partial, and are not client results.
func TestChatRoundTrip(t *testing.T) {
	db, path := open(t)
	if err := db.CreateRun(Run{ID: "bench-chat-x", Name: "bench -side server", Status: "done"}); err != nil {
		t.Fatal(err)
	}
	want := []ChatResult{
		{Lib: "gws", Strategy: "best", Clients: 16, Round: 0, Valid: true, Rounds: 4, PerRound: 1, Sent: 64, Deliveries: 1024, ServerDeliveries: 1024,
			WallNS: 3e6, ServerUserNS: 2e6, ServerSysNS: 5e5, ServerMaxRSSKiB: 22_000, ServerWrites: 1030, ClientUserNS: 1e6,
			ClientSysNS: 4e5, ClientMaxRSSKiB: 9000, ClientReads: 700, P50us: 120.5, P99us: 980, MaxUs: 1500},
		{Lib: "coder", Strategy: "plain", Clients: 16, Round: 1, Reason: "the server dropped 1 client(s)", Err: "", Drops: 1, Deliveries: 1000, ServerDeliveries: 1000},
	}
	if err := db.WriteChatResults(want); err != nil {
		t.Fatal(err)
	}
	if err := db.WriteChatResults([]ChatResult{{Lib: "x", Partial: true}}); err == nil {
		t.Error("a partial result was written")
	}
	ro := reopen(t, db, path)
	got, err := ro.ChatResults()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("chat results %+v, %v\nwant %+v", got, err, want)
	}
	if rs, err := ro.BenchResults(); err != nil || len(rs) != 0 {
		t.Errorf("bench results %+v, %v; want none", rs, err)
	}
}

// reopen closes the writer db and opens path read-only, closed when the
// test ends.
func reopen(t *testing.T, db *DB, path string) *DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	return ro
}

// mainResults reads testdata/<name>-86da855.results.json: the results.json
// that the soak of commit 86da855 wrote beside testdata/<name>-86da855.db.
func mainResults(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+"-86da855.results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// copyFile copies testdata's file name into a temporary directory, so
// that opening it for writing migrates a copy.
func copyFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "soak.db")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestChatFromMain: the soak.db that soak bench -side server of commit
// 86da855 wrote (its runs squeezed into bench_results) gives its runs back
// as chat results, read as it is and once migrated, equal to the
// results.json written beside it; it holds no client results.
func TestChatFromMain(t *testing.T) {
	var rec struct {
		Results []struct {
			Lib    string
			N      int
			Round  int
			Valid  bool
			Client struct {
				Deliveries int64
				WallNS     int64 `json:"wall_ns"`
			}
			ServerDeliveries int64 `json:"server_deliveries"`
			ServerUserNS     int64 `json:"server_user_ns"`
			ServerSysNS      int64 `json:"server_sys_ns"`
			ServerMaxRSSKiB  int64 `json:"server_max_rss_kib"`
		}
	}
	mainResults(t, "chat", &rec)
	var want []ChatResult
	for _, r := range rec.Results {
		want = append(want, ChatResult{Lib: r.Lib, Clients: r.N, Round: r.Round, Valid: r.Valid, Deliveries: r.Client.Deliveries,
			ServerDeliveries: r.ServerDeliveries, WallNS: r.Client.WallNS, ServerUserNS: r.ServerUserNS, ServerSysNS: r.ServerSysNS,
			ServerMaxRSSKiB: r.ServerMaxRSSKiB, Partial: true})
	}
	if len(want) != 8 {
		t.Fatalf("results.json: %d results, want 8 (2 libraries × 2 room sizes × 2 rounds)", len(want))
	}
	eachOpen(t, copyFile(t, "chat-86da855.db"), func(how string, db *DB) {
		if k, err := db.Kind(); err != nil || k != KindBench {
			t.Errorf("%s: kind %q, %v; want bench", how, k, err)
		}
		got, err := db.ChatResults()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: chat results %+v, %v\nwant %+v", how, got, err, want)
		}
		if rs, err := db.BenchResults(); err != nil || len(rs) != 0 {
			t.Errorf("%s: bench results %+v, %v; want none", how, rs, err)
		}
	})
}

// eachOpen calls fn with the database at path opened read-only as it is,
// then opened for writing (migrated), and closes it after each.
func eachOpen(t *testing.T, path string, fn func(how string, db *DB)) {
	t.Helper()
	for _, how := range []string{"read-only", "migrated"} {
		open := Open
		if how == "read-only" {
			open = OpenReadOnly
		}
		db, err := open(path)
		if err != nil {
			t.Fatal(err)
		}
		fn(how, db)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBenchFromMain: the soak.db of a client bench of commit 86da855 gives
// its runs back, read as it is and once migrated, as its results.json has
// them, with no dimension columns (Compression "": written before them) and
// no chat results.
func TestBenchFromMain(t *testing.T) {
	var rec struct {
		Results []struct {
			Scenario, Lib, Path string
			Round               int
			Valid               bool
			Messages            int64
			WallNS              int64 `json:"wall_ns"`
			WireBytes           int64 `json:"wire_bytes"`
		}
	}
	mainResults(t, "client", &rec)
	eachOpen(t, copyFile(t, "client-86da855.db"), func(how string, db *DB) {
		got, err := db.BenchResults()
		if err != nil || len(got) != len(rec.Results) || len(got) != 6 {
			t.Fatalf("%s: %d bench results, %v; want %d (gorilla bare, raw, ceiling × 2 rounds)", how, len(got), err, len(rec.Results))
		}
		for i, r := range rec.Results {
			g := got[i]
			if g.Scenario != r.Scenario || g.Lib != r.Lib || g.Path != r.Path || g.Round != r.Round || g.Valid != r.Valid ||
				g.Msgs != r.Messages || g.WallNS != r.WallNS || g.WireBytes != r.WireBytes || g.Compression != "" || g.Encoding != "" {
				t.Errorf("%s: result %d %+v, results.json %+v", how, i, g, r)
			}
		}
		if cs, err := db.ChatResults(); err != nil || len(cs) != 0 {
			t.Errorf("%s: chat results %+v, %v; want none", how, cs, err)
		}
	})
}
