package controller

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/store"
)

// TestEndErrorOneLine: a run whose writes fail to the end (here: the
// database is gone) ends with one line that says what is true: how many
// batches were not written, which seconds, that their rows are lost, and
// that its end could not be recorded — no newline, nothing claiming that
// nothing was lost; the errors stay reachable (errors.As).
func TestEndErrorOneLine(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateRun(store.Run{ID: "e", Name: "e", Status: "running", Started: time.Now(), Planned: time.Minute}); err != nil {
		t.Fatal(err)
	}
	o := Options{Log: slog.New(slog.DiscardHandler), Now: time.Now, WriteBacklog: 600, EndRetry: &store.Retry{Budget: 50 * time.Millisecond}}
	l := begin(o, "e", dir, nil, db)
	db.Close() // every write fails from now on
	l.AddSample(store.Sample{Lib: "gws", Sec: 3, HasWorker: true})
	l.Flush()
	l.AddSample(store.Sample{Lib: "gws", Sec: 4, HasWorker: true})
	_, err = l.End(context.Background(), nil, nil)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"2 batches not written (seconds 3–4), their rows lost: ", "; finish run: "} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") || strings.Contains(msg, "nothing written is lost") {
		t.Errorf("%q: want one line, claiming nothing lost nowhere", msg)
	}
	var list interface{ Unwrap() []error }
	if !errors.As(err, &list) || len(list.Unwrap()) < 2 {
		t.Errorf("%T: the errors are not each reachable", err)
	}
}
