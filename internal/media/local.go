package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/reelay/reelay/internal/fileperm"
)

// Programs such as ffmpeg read and write files, not blobs. A store in a local folder hands
// them its own files, and takes theirs in by renaming; any other store (S3) downloads a
// temporary copy and uploads the result as a stream. Either way no video is held in memory.

// LocalFile gives a path that reads the stored file key: the stored file itself in a file://
// store, else a copy downloaded into dir. done removes the copy (and does nothing for a stored
// file), and must be called.
func (s *Store) LocalFile(ctx context.Context, key, dir string) (path string, done func(), err error) {
	if s.dir != "" {
		path = filepath.Join(s.dir, filepath.FromSlash(key))
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return "", nil, fmt.Errorf("%w: %s", ErrNotFound, key)
		} else if err != nil {
			return "", nil, fmt.Errorf("media store: %s: %w", key, err)
		}
		return path, func() {}, nil
	}
	r, err := s.Open(ctx, key, 0)
	if err != nil {
		return "", nil, err
	}
	defer r.Close()
	f, err := os.CreateTemp(dir, ".source-*")
	if err != nil {
		return "", nil, fmt.Errorf("media store: local copy: %w", err)
	}
	done = func() { os.Remove(f.Name()) }
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		done()
		return "", nil, fmt.Errorf("media store: local copy of %s: %w", key, err)
	}
	return f.Name(), done, nil
}

// TempDir is where a file on its way into the store is best written: inside a file:// store's
// folder, from where PutFile moves it in with a rename; else dir.
func (s *Store) TempDir(dir string) (string, error) {
	if s.dir == "" {
		return dir, nil
	}
	tmp := filepath.Join(s.dir, filepath.FromSlash(tmpPrefix))
	if err := os.MkdirAll(tmp, fileperm.Dir); err != nil {
		return "", fmt.Errorf("media store: %w", err)
	}
	return tmp, nil
}

// PutFileAt stores the local file at path under key, and removes path. In a file:// store it
// is moved in when it lies on the same disk (TempDir), without reading it; any other store
// receives it as a stream. The Blob's SHA-256 is known only when the bytes were read ("" for
// a file moved in).
func (s *Store) PutFileAt(ctx context.Context, key, path string, kind Kind) (Blob, error) {
	defer os.Remove(path)
	st, err := os.Stat(path)
	if err != nil {
		return Blob{}, fmt.Errorf("media store: %w", err)
	}
	b := Blob{Key: key, Size: st.Size(), ContentType: kind.ContentType}
	if s.dir != "" {
		dst := filepath.Join(s.dir, filepath.FromSlash(key))
		if os.MkdirAll(filepath.Dir(dst), fileperm.Dir) == nil && os.Chmod(path, fileperm.File) == nil && os.Rename(path, dst) == nil {
			return b, nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return Blob{}, fmt.Errorf("media store: %w", err)
	}
	defer f.Close()
	if b.Size, b.SHA256, err = s.write(ctx, key, f, kind.ContentType); err != nil {
		s.deleteQuietly(key)
		return Blob{}, err
	}
	return b, nil
}
