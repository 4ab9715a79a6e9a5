//go:build unix

package cli

import (
	"fmt"
	"os"
	"syscall"

	"github.com/reelay/reelay/internal/store"
)

// lockDatabase takes an exclusive lock next to a SQLite database, so that a second server on
// the same file fails at start instead of sharing it (SQLite has one writer, and the start-up
// rescue of running jobs relies on being the only worker).
func lockDatabase(databaseURL string) (unlock func(), err error) {
	path := store.SQLitePath(databaseURL) + ".lock"
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock database: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another reelay server is using %s (lock %s held): %w", store.SQLitePath(databaseURL), path, err)
	}
	return func() { f.Close() }, nil
}
