//go:build unix

package store_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/reelay/reelay/internal/store"
)

// TestSQLiteFilesPrivate: the database and the journals SQLite makes beside it are readable
// by the user running reelay only, whatever the umask (SQLite sets its files' modes itself,
// 0644 unless the database file already exists with another). Not parallel: the umask is the
// process's.
func TestSQLiteFilesPrivate(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "reelay.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.CountAccounts(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string]os.FileMode{dir: 0o700, path: 0o600, path + "-wal": 0o600, path + "-shm": 0o600}
	for p, mode := range want {
		info, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
			continue
		}
		if got := info.Mode().Perm(); got != mode {
			t.Errorf("%s: mode %04o, want %04o", filepath.Base(p), got, mode)
		}
	}
}
