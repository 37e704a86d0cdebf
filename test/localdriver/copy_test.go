package localdriver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/klog/v2/ktesting"
)

func TestCopyTree(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	src, dst := t.TempDir(), t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	writeFile(t, filepath.Dir(outside), "secret", "outside")
	writeFile(t, src, "top.txt", "top")
	writeFile(t, src, "a/b/deep.txt", "deep")
	if err := os.Chmod(filepath.Join(src, "top.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a/b/deep.txt", filepath.Join(src, "rel-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(src, "abs-link")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, src, "ro/inside.txt", "in a read-only directory")
	if err := os.Chmod(filepath.Join(src, "ro"), 0o555); err != nil {
		t.Fatal(err)
	}
	// Let t.TempDir's cleanup remove the copies.
	t.Cleanup(func() {
		_ = os.Chmod(filepath.Join(src, "ro"), 0o755)
		_ = os.Chmod(filepath.Join(dst, "ro"), 0o755)
	})

	if err := copyTree(ctx, src, dst); err != nil {
		t.Fatalf("copyTree: %v", err)
	}

	for file, want := range map[string]string{
		"top.txt": "top", "a/b/deep.txt": "deep", "rel-link": "deep", "ro/inside.txt": "in a read-only directory",
	} {
		if got := readFile(t, dst, file); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	for path, want := range map[string]os.FileMode{"top.txt": 0o600, "ro": 0o555 | os.ModeDir} {
		info, err := os.Stat(filepath.Join(dst, path))
		if err != nil {
			t.Errorf("stat copy of %s: %v", path, err)
		} else if info.Mode() != want {
			t.Errorf("mode of %s = %v, want %v", path, info.Mode(), want)
		}
	}
	// Links are copied as links, not followed.
	if link, err := os.Readlink(filepath.Join(dst, "abs-link")); err != nil || link != outside {
		t.Errorf("abs-link = %q (%v), want a link to %q", link, err, outside)
	}
}

func TestCopyTreeStopsWhenTheContextIsDone(t *testing.T) {
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	src := t.TempDir()
	writeFile(t, src, "f", "x")
	if err := copyTree(ctx, src, t.TempDir()); !errors.Is(err, context.Canceled) {
		t.Errorf("copyTree with a canceled context = %v, want context.Canceled", err)
	}
}
