//go:build unix

package cli

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
)

// TestServeDataFilesPrivate: what the server keeps in its data folder (the SQLite database
// and its journals and lock, the secret key, the media) is its user's only, folders 0700 and
// files 0600, whatever the umask; and an install left with looser modes is tightened at the
// next start, which says so in its log. Not parallel: the umask is the process's, and 0 here,
// so that nothing can pass by leaning on it.
func TestServeDataFilesPrivate(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	dataDir := filepath.Join(t.TempDir(), "data")
	video := mediatest.MP4(t, mediatest.Options{Duration: 4 * time.Second, Size: 200_000})

	t.Run("fresh start", func(t *testing.T) {
		url, stderr := startServer(t, dataDir)
		key := keyPattern.FindString(stderr.String())
		run := func(args ...string) cliResult {
			return runCLI(t, "", append(args, "--url", url, "--api-key", key)...).ok(t)
		}
		// A video stored, and uploaded to a simulator whose chunks pass through the same folder.
		run("channels", "connect", "linkedin", "--sandbox")
		run("publish", "--video", video, "--platforms", "linkedin", "--title", "Private")
		files := checkPrivate(t, dataDir)
		for _, want := range []string{"reelay.db", "reelay.db-wal", "reelay.db-shm", "reelay.db.lock", "secret.key"} {
			if !files[want] {
				t.Errorf("no %s in the data folder: %v", want, files)
			}
		}
		t.Logf("files under the data folder: %v", slices.Sorted(maps.Keys(files)))
		blobs := 0
		for f := range files {
			if strings.HasPrefix(f, "blobs/") {
				blobs++
			}
		}
		if blobs == 0 {
			t.Errorf("no media stored under blobs/: %v", files)
		}
	})
	if t.Failed() {
		return
	}

	t.Run("loose install tightened at start", func(t *testing.T) {
		// As an install from before: folders 0755, files 0644.
		loosened := 0
		err := filepath.WalkDir(dataDir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if d.IsDir() {
				mode = 0o755
			}
			loosened++
			return os.Chmod(p, mode)
		})
		if err != nil {
			t.Fatal(err)
		}
		_, stderr := startServer(t, dataDir)
		if !strings.Contains(stderr.String(), "made data files private") {
			t.Errorf("the start does not say it tightened the modes:\n%s", stderr.String())
		}
		checkPrivate(t, dataDir)
	})
}

// checkPrivate fails the test for every folder under dir (and dir) that is not 0700 and every
// file that is not 0600, and returns the files' paths relative to dir.
func checkPrivate(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		want := os.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		} else {
			files[filepath.ToSlash(rel)] = true
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s: mode %04o, want %04o", rel, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
