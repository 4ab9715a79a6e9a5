package s3test_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/media/s3test"
)

func TestMain(m *testing.M) {
	code := m.Run()
	s3test.StopShared()
	os.Exit(code)
}

// TestBlobURL stores and reads a file through reelay's media store in a bucket of the shared
// server, with the credentials Shared put in the environment; another bucket does not see it.
func TestBlobURL(t *testing.T) {
	ctx := context.Background()
	st, err := media.OpenStore(ctx, s3test.BlobURL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	want := bytes.Repeat([]byte("reelay "), 1<<20)
	b, err := st.Put(ctx, bytes.NewReader(want), media.KindMP4)
	if err != nil {
		t.Fatal(err)
	}
	r, err := st.Open(ctx, b.Key, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(want))
	}

	other, err := media.OpenStore(ctx, s3test.BlobURL(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Open(ctx, b.Key, 0); err == nil {
		t.Errorf("another bucket has %s", b.Key)
	}
}
