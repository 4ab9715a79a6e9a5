//go:build unix

package fileperm_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob"

	"github.com/reelay/reelay/internal/fileperm"
)

// withUmask runs the test with the process's umask at mask, as a careless service manager
// might leave it (umask is per process, so these tests do not run in parallel).
func withUmask(t *testing.T, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// layout makes files and folders (a trailing slash) under root with the given modes; a mode
// of 0 with a "->" in the name makes a symbolic link.
func layout(t *testing.T, root string, entries map[string]os.FileMode) {
	t.Helper()
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	slices.Sort(names) // parents first
	for _, n := range names {
		mode := entries[n]
		if link, target, ok := strings.Cut(n, "->"); ok {
			if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		p := filepath.Join(root, n)
		if strings.HasSuffix(n, "/") {
			if err := os.Mkdir(p, mode); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(p, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
}

func modeOf(t *testing.T, p string) os.FileMode {
	t.Helper()
	info, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

func TestTighten(t *testing.T) {
	withUmask(t, 0)
	outside := filepath.Join(t.TempDir(), "not-reelays")
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		entries map[string]os.FileMode
		tighten func(root string) ([]string, error)
		want    map[string]os.FileMode // modes after; unlisted entries must not change
		changed []string
	}{
		{
			name: "tree: folders 0700, files 0600, links and their targets left alone",
			entries: map[string]os.FileMode{
				"blobs/": 0o755, "blobs/ab/": 0o777, "blobs/ab/cd": 0o644, "blobs/ab/ef": 0o666,
				"blobs/ab/private": 0o600, "blobs/ab/exec": 0o750, "blobs/link->" + outside: 0,
			},
			tighten: func(root string) ([]string, error) { return fileperm.TightenTree(filepath.Join(root, "blobs")) },
			want: map[string]os.FileMode{
				"blobs": 0o700, "blobs/ab": 0o700, "blobs/ab/cd": 0o600, "blobs/ab/ef": 0o600,
				"blobs/ab/private": 0o600, "blobs/ab/exec": 0o700,
			},
			changed: []string{"blobs", "blobs/ab", "blobs/ab/cd", "blobs/ab/ef", "blobs/ab/exec"},
		},
		{
			name: "paths: each itself, not what a folder holds; missing ones skipped",
			entries: map[string]os.FileMode{
				"data/": 0o755, "data/reelay.db": 0o644, "data/reelay.db-wal": 0o644, "data/notes.txt": 0o644,
				"data/secret.key": 0o600,
			},
			tighten: func(root string) ([]string, error) {
				d := filepath.Join(root, "data")
				return fileperm.Tighten(d, filepath.Join(d, "reelay.db"), filepath.Join(d, "reelay.db-wal"),
					filepath.Join(d, "reelay.db-shm"), filepath.Join(d, "secret.key"))
			},
			want: map[string]os.FileMode{
				"data": 0o700, "data/reelay.db": 0o600, "data/reelay.db-wal": 0o600, "data/notes.txt": 0o644,
				"data/secret.key": 0o600,
			},
			changed: []string{"data", "data/reelay.db", "data/reelay.db-wal"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			layout(t, root, tt.entries)
			changed, err := tt.tighten(root)
			if err != nil {
				t.Fatal(err)
			}
			for p, want := range tt.want {
				if got := modeOf(t, filepath.Join(root, p)); got != want {
					t.Errorf("%s: mode %04o, want %04o", p, got, want)
				}
			}
			if got := modeOf(t, outside); got != 0o644 {
				t.Errorf("a link's target outside: mode %04o, want it untouched (0644)", got)
			}
			var rel []string
			for _, c := range changed {
				r, _ := filepath.Rel(root, c)
				rel = append(rel, r)
			}
			slices.Sort(rel)
			if !slices.Equal(rel, tt.changed) {
				t.Errorf("changed %v, want %v", rel, tt.changed)
			}
			// Once is enough: a second pass finds nothing to change.
			if again, err := tt.tighten(root); err != nil || len(again) != 0 {
				t.Errorf("second pass changed %v (%v), want nothing", again, err)
			}
		})
	}
}

// A file:// bucket creates its files 0666 less the umask; BeforeWrite makes them 0600 before
// the first byte, whichever way they are written.
func TestBeforeWrite(t *testing.T) {
	withUmask(t, 0)
	dir := t.TempDir()
	bucket, err := fileblob.OpenBucket(dir, &fileblob.Options{NoTempDir: true, DirFileMode: fileperm.Dir, Metadata: fileblob.MetadataDontWrite})
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	ctx := context.Background()
	if err := bucket.WriteAll(ctx, "a/written", []byte("x"), &blob.WriterOptions{BeforeWrite: fileperm.BeforeWrite}); err != nil {
		t.Fatal(err)
	}
	if err := bucket.Copy(ctx, "b/copied", "a/written", &blob.CopyOptions{BeforeCopy: fileperm.BeforeWrite}); err != nil {
		t.Fatal(err)
	}
	if err := bucket.WriteAll(ctx, "c/plain", []byte("x"), nil); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{"a": 0o700, "a/written": 0o600, "b/copied": 0o600, "c/plain": 0o666} {
		if got := modeOf(t, filepath.Join(dir, p)); got != want {
			t.Errorf("%s: mode %04o, want %04o", p, got, want)
		}
	}
	// A bucket that is no folder has no file to change.
	mem, err := blob.OpenBucket(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := mem.WriteAll(ctx, "k", []byte("x"), &blob.WriterOptions{BeforeWrite: fileperm.BeforeWrite}); err != nil {
		t.Errorf("mem bucket: %v", err)
	}
}
