package bench

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"
)

func TestYardstickTextIsFixed(t *testing.T) {
	a, b := yardstickText(), yardstickText()
	if len(a) != 128<<10 {
		t.Fatalf("text of %d bytes, want 128 KiB", len(a))
	}
	// The same work on every machine and in every version: a change to the text would make
	// figures from before and after it incomparable, so its hash is pinned.
	const want = "15d93fdf0b87fae3903711cf21ec41c4b0ba0df4208adcde4809797119103944"
	if got := fmt.Sprintf("%x", sha256.Sum256(a)); got != want {
		t.Errorf("text's SHA-256 %s, want %s: yardstick figures would not compare with earlier ones", got, want)
	}
	if &a[0] != &b[0] {
		t.Error("the text is generated again on every call")
	}
}

func TestMeasureSpeed(t *testing.T) {
	// A nanosecond is over before any goroutine runs, as 50 ms can be on a machine busy with
	// other tests: each part still does its work once.
	for _, d := range []time.Duration{50 * time.Millisecond, time.Nanosecond} {
		s := MeasureSpeed(context.Background(), d)
		if s.OneCoreMBps <= 0 || s.AllCoresMBps <= 0 || s.LoopbackRoundTrips <= 0 {
			t.Errorf("speed for %s: %+v, want work done on one core, on all, and over loopback", d, s)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	s := MeasureSpeed(ctx, time.Hour)
	if time.Since(start) > time.Minute {
		t.Errorf("an ended context ran the yardstick for %s", time.Since(start))
	}
	if s.OneCoreMBps != 0 || s.AllCoresMBps != 0 || s.LoopbackRoundTrips != 0 {
		t.Errorf("speed %+v after the context ended, want none measured", s)
	}
}
