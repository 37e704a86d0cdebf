package localdriver

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/klog/v2"
)

// copyTree copies everything below src into dst, which must exist: regular
// files with their permission bits, directories, and symbolic links as
// links (never followed, so a link cannot pull in data from outside the
// volume). Other kinds of file, such as sockets and devices, are skipped.
// It stops early when ctx is done.
func copyTree(ctx context.Context, src, dst string) error {
	logger := klog.FromContext(ctx)
	type dirMode struct {
		path string
		perm fs.FileMode
	}
	// Directories get their modes after their content is copied: a
	// read-only directory would not take it.
	var dirs []dirMode
	err := filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("copy interrupted: %w", err)
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return fmt.Errorf("relative path of %s: %w", path, err)
		}
		if rel == "." {
			return nil
		}
		target := filepath.Join(dst, rel)
		info, err := e.Info()
		if err != nil {
			return fmt.Errorf("stat %s: %w", path, err)
		}
		switch mode := info.Mode(); {
		case mode.IsDir():
			if err := os.Mkdir(target, 0o700); err != nil {
				return fmt.Errorf("create directory: %w", err)
			}
			dirs = append(dirs, dirMode{path: target, perm: mode.Perm()})
		case mode.IsRegular():
			return copyFile(path, target, mode.Perm())
		case mode&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return fmt.Errorf("read link: %w", err)
			}
			if err := os.Symlink(link, target); err != nil {
				return fmt.Errorf("create link: %w", err)
			}
		default:
			logger.Info("Not copying special file", "path", path, "mode", mode.String())
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Children first, so a parent's mode cannot lock them out.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chmod(dirs[i].path, dirs[i].perm); err != nil {
			return fmt.Errorf("set mode of copy: %w", err)
		}
	}
	return nil
}

// copyFile copies the regular file src to the new file dst with permission
// bits perm.
func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("open source: %w", err)
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("create copy: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("close copy: %w", err)
	}
	// OpenFile applied the umask; the copy keeps the source's bits.
	if err := os.Chmod(dst, perm); err != nil {
		return fmt.Errorf("set mode of copy: %w", err)
	}
	return nil
}
