package main

import (
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

// synthRun writes a small synthetic run into dir and returns its database.
func synthRun(t *testing.T, dir string) string {
	t.Helper()
	if _, stderr, err := runSoak(t, "synth", "-duration", "2m", "-symbols", "1", dir); err != nil {
		t.Fatalf("synth: %v\n%s", err, stderr)
	}
	return filepath.Join(dir, "soak.db")
}

// setRun changes the run record of the database at path as SQL would.
func setRun(t *testing.T, path, set string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("UPDATE runs SET "+set, args...); err != nil {
		t.Fatal(err)
	}
}

// TestCompareKinds: soak compare refuses a server-side soak against a client
// soak (deliveries against market messages), naming both kinds, with exit
// code 2; two client soaks still compare.
func TestCompareKinds(t *testing.T) {
	dir := t.TempDir()
	client := synthRun(t, filepath.Join(dir, "client"))
	server := synthRun(t, filepath.Join(dir, "server"))
	setRun(t, server, `settings_json = json_set(settings_json, '$.side', 'server')`)
	_, stderr, err := runSoak(t, "compare", server, client)
	if err == nil {
		t.Fatal("compare of a server-side soak with a client soak succeeded")
	}
	var errb strings.Builder
	if code := exitCode(err, &errb); code != 2 || !strings.Contains(errb.String(), "server-side soak") || !strings.Contains(errb.String(), "client soak") {
		t.Errorf("exit %d, %q (stderr %q): want 2 naming both kinds", code, errb.String(), stderr)
	}
	if _, stderr, err := runSoak(t, "compare", client, client); err != nil {
		t.Errorf("two client soaks: %v\n%s", err, stderr)
	}
}

// TestReportRunWithoutEnd: a run recorded as running that no process owns
// (its controller died, or the disk was full at its end) is reported, and
// soak report says on stderr, in one line, that the run did not record its
// end, instead of saying nothing as if it were still going.
func TestReportRunWithoutEnd(t *testing.T) {
	path := synthRun(t, filepath.Join(t.TempDir(), "run"))
	setRun(t, path, `status = 'running', ended_ns = NULL`)
	out, stderr, err := runSoak(t, "report", filepath.Dir(path))
	if err != nil {
		t.Fatalf("report: %v", err)
	}
	if !strings.Contains(stderr, "ended without recording its end") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr %q: want one line saying the run did not record its end", stderr)
	}
	if !strings.Contains(out, "report.html") {
		t.Errorf("no report written:\n%s", out)
	}
}

// TestJoinedErrorsOneLine: errors joined by errors.Join print as one line,
// separated by "; ".
func TestJoinedErrorsOneLine(t *testing.T) {
	var b strings.Builder
	exitCode(errorsJoin("a failed", "b failed"), &b)
	if got := b.String(); got != "soak: a failed; b failed\n" {
		t.Errorf("printed %q", got)
	}
}

func errorsJoin(msgs ...string) error {
	var errs []error
	for _, m := range msgs {
		errs = append(errs, errors.New(m))
	}
	return errors.Join(errs...)
}
