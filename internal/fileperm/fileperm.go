// Package fileperm keeps what reelay stores on local disk (the SQLite database and its
// journals, media blobs, the secret key) to the user that runs it: directories 0700, files
// 0600. Nothing relies on the umask: SQLite sets its files' modes itself, and gocloud's
// fileblob creates files 0666.
package fileperm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

const (
	// Dir is the mode of the directories reelay creates for its data.
	Dir os.FileMode = 0o700
	// File is the mode of the files reelay writes there.
	File os.FileMode = 0o600
)

// shared are the permission bits that let other users in.
const shared os.FileMode = 0o077

// Tighten takes group and other permissions away from each of paths that exists (a file, or
// a directory itself, not what it holds), so that an install made before reelay set its modes
// stops being readable by every local user. A symbolic link is followed. It returns the paths
// it changed; a path that cannot be changed (owned by someone else) is reported in the
// error, and the others are still done.
func Tighten(paths ...string) ([]string, error) {
	if runtime.GOOS == "windows" {
		// Windows has no group and other bits to take away; its ACLs are another matter.
		return nil, nil
	}
	var changed []string
	var errs []error
	for _, p := range paths {
		info, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done, err := tighten(p, info)
		if err != nil {
			errs = append(errs, err)
		} else if done {
			changed = append(changed, p)
		}
	}
	return changed, errors.Join(errs...)
}

// TightenTree is Tighten for dir and everything under it. Symbolic links under dir are left
// alone: what they point at is not reelay's to change.
func TightenTree(dir string) ([]string, error) {
	if runtime.GOOS == "windows" {
		return nil, nil
	}
	root, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var changed []string
	var errs []error
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type()&fs.ModeSymlink == 0 {
			var info fs.FileInfo
			if info, err = d.Info(); err == nil {
				var done bool
				if done, err = tighten(path, info); done {
					changed = append(changed, path)
				}
			}
		}
		// A file gone meanwhile (a temporary one) is no error; one that cannot be read or
		// changed is, but does not stop the others.
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return changed, errors.Join(errs...)
}

// tighten takes group and other bits off path, reporting whether it had any.
func tighten(path string, info fs.FileInfo) (bool, error) {
	perm := info.Mode().Perm()
	if perm&shared == 0 {
		return false, nil
	}
	if err := os.Chmod(path, perm&^shared); err != nil {
		return false, err
	}
	return true, nil
}

// BeforeWrite is a gocloud blob.WriterOptions.BeforeWrite (and CopyOptions.BeforeCopy) that
// makes a file:// bucket's file private before any byte is written to it: fileblob creates it
// 0666, less the umask. Other buckets have no file to change, and pass.
func BeforeWrite(as func(any) bool) error {
	var f *os.File
	if !as(&f) || f == nil {
		return nil
	}
	if err := f.Chmod(File); err != nil {
		return fmt.Errorf("making %s private: %w", f.Name(), err)
	}
	return nil
}
