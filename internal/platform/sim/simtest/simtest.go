// Package simtest holds what the simulators' tests share: the conformance tests every sim.State
// passes (the State in memory, in package sim's tests, and the one in the database, in package
// store's tests on SQLite and PostgreSQL, run the same ones); the States and processes the
// simulators' persistence tests run on (helpers.go); and the fuzzing of a simulator through its
// handler (fuzz.go).
package simtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simstate"
)

// Open returns a new, empty State whose records expire by the clock now.
type Open func(t *testing.T, now func() time.Time) sim.State

// TestState runs the conformance tests on States made by open.
func TestState(t *testing.T, open Open) {
	tests := []struct {
		name string
		run  func(t *testing.T, st sim.State, clock *clocktest.Clock)
	}{
		{"put and get", testPutGet},
		{"failed update keeps nothing", testRollback},
		{"expiry", testExpiry},
		{"list and count", testListCount},
		{"delete", testDelete},
		{"purge", testPurge},
		{"entries", testEntries},
		{"concurrent updates of one record", testConcurrentUpdates},
		{"concurrent first writes of one record", testConcurrentInserts},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
			tc.run(t, open(t, clock.Now), clock)
		})
	}
}

var ctx = context.Background()

func key(kind, id string) sim.Key { return sim.Key{Platform: "tiktok", Kind: kind, ID: id} }

func put(t *testing.T, st sim.State, recs ...sim.Record) {
	t.Helper()
	err := st.Update(ctx, func(tx sim.Tx) error {
		for _, r := range recs {
			if err := tx.Put(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
}

func mustGet(t *testing.T, st sim.State, k sim.Key) (sim.Record, bool) {
	t.Helper()
	r, found, err := st.Get(ctx, k)
	if err != nil {
		t.Fatalf("get %v: %v", k, err)
	}
	return r, found
}

func testPutGet(t *testing.T, st sim.State, clock *clocktest.Clock) {
	k := key("post", "p1")
	if _, found := mustGet(t, st, k); found {
		t.Fatal("a record was found before any was written")
	}
	exp := clock.Now().Add(time.Hour).Round(time.Millisecond)
	put(t, st, sim.Record{Key: k, Account: "acct", Data: []byte(`{"n":1}`), Expires: exp, Blobs: true})
	r, found := mustGet(t, st, k)
	if !found || r.Key != k || r.Account != "acct" || string(r.Data) != `{"n":1}` || !r.Expires.Equal(exp) || !r.Blobs {
		t.Fatalf("got %+v (found %v), want what was written", r, found)
	}
	// A record of another platform or kind with the same id is another record.
	if _, found := mustGet(t, st, sim.Key{Platform: "youtube", Kind: "post", ID: "p1"}); found {
		t.Fatal("another platform's record of the same id was found")
	}
	if _, found := mustGet(t, st, key("upload", "p1")); found {
		t.Fatal("another kind's record of the same id was found")
	}
	// A record written again is replaced; its blobs flag stays set.
	put(t, st, sim.Record{Key: k, Account: "acct", Data: []byte(`{"n":2}`)})
	r, _ = mustGet(t, st, k)
	if string(r.Data) != `{"n":2}` || !r.Expires.IsZero() || !r.Blobs {
		t.Fatalf("after a second write: %+v, want the new data, no expiry and blobs still set", r)
	}
	// Within the transaction, a record written is read back.
	err := st.Update(ctx, func(tx sim.Tx) error {
		if err := tx.Put(sim.Record{Key: key("post", "p2"), Data: []byte(`{}`)}); err != nil {
			return err
		}
		if _, found, err := tx.Get(key("post", "p2")); err != nil || !found {
			return fmt.Errorf("read back: found %v, %v", found, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func testRollback(t *testing.T, st sim.State, _ *clocktest.Clock) {
	k := key("post", "p1")
	put(t, st, sim.Record{Key: k, Data: []byte(`{"n":1}`)})
	boom := errors.New("boom")
	err := st.Update(ctx, func(tx sim.Tx) error {
		if err := tx.Put(sim.Record{Key: k, Data: []byte(`{"n":2}`)}); err != nil {
			return err
		}
		if err := tx.Put(sim.Record{Key: key("post", "p2"), Data: []byte(`{}`)}); err != nil {
			return err
		}
		if err := tx.Receive(sim.Entry{Platform: "tiktok", Account: "a", Kind: simstate.EntryUpload, Data: []byte(`{}`)}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("update answered %v, want the function's error", err)
	}
	if r, _ := mustGet(t, st, k); string(r.Data) != `{"n":1}` {
		t.Errorf("a failed update changed a record: %s", r.Data)
	}
	if _, found := mustGet(t, st, key("post", "p2")); found {
		t.Error("a failed update inserted a record")
	}
	if e, err := st.Entries(ctx, "", nil); err != nil || len(e) != 0 {
		t.Errorf("a failed update appended entries: %v, %v", e, err)
	}
}

func testExpiry(t *testing.T, st sim.State, clock *clocktest.Clock) {
	k := key("upload", "u1")
	put(t, st, sim.Record{Key: k, Account: "acct", Data: []byte(`{}`), Expires: clock.Now().Add(time.Hour)})
	clock.Advance(59 * time.Minute)
	if _, found := mustGet(t, st, k); !found {
		t.Fatal("a record was gone before it expired")
	}
	clock.Advance(time.Minute)
	if _, found := mustGet(t, st, k); found {
		t.Error("Get found an expired record")
	}
	if l, err := st.List(ctx, "tiktok", "upload", "acct"); err != nil || len(l) != 0 {
		t.Errorf("List answered an expired record: %v, %v", l, err)
	}
	if n, err := st.Count(ctx, "tiktok", "upload", ""); err != nil || n != 0 {
		t.Errorf("Count counted an expired record: %d, %v", n, err)
	}
	err := st.Update(ctx, func(tx sim.Tx) error {
		if _, found, err := tx.Get(k); err != nil || found {
			return fmt.Errorf("tx.Get of an expired record: found %v, %v", found, err)
		}
		// Written again, it lives again.
		return tx.Put(sim.Record{Key: k, Account: "acct", Data: []byte(`{"again":true}`)})
	})
	if err != nil {
		t.Fatal(err)
	}
	if r, found := mustGet(t, st, k); !found || string(r.Data) != `{"again":true}` {
		t.Errorf("a record written over an expired one: %+v, found %v", r, found)
	}
}

func ids(recs []sim.Record) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.ID)
	}
	return out
}

func testListCount(t *testing.T, st sim.State, clock *clocktest.Clock) {
	// Written one transaction at a time, out of id order.
	for _, r := range []sim.Record{
		{Key: key("post", "c"), Account: "alice"},
		{Key: key("post", "a"), Account: "bob"},
		{Key: key("post", "b"), Account: "alice"},
		{Key: key("upload", "d"), Account: "alice"},
		{Key: sim.Key{Platform: "youtube", Kind: "post", ID: "e"}, Account: "alice"},
		{Key: key("post", "f"), Account: "alice", Expires: clock.Now().Add(time.Second)},
	} {
		r.Data = []byte(`{}`)
		put(t, st, r)
	}
	clock.Advance(time.Second)
	// Rewriting a record keeps its place.
	put(t, st, sim.Record{Key: key("post", "c"), Account: "alice", Data: []byte(`{"v":2}`)})
	for _, tc := range []struct {
		account string
		want    []string
	}{
		{"alice", []string{"c", "b"}},
		{"bob", []string{"a"}},
		{"carol", []string{}},
		{"", []string{"c", "a", "b"}},
	} {
		l, err := st.List(ctx, "tiktok", "post", tc.account)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(l); !slices.Equal(got, tc.want) {
			t.Errorf("List(%q) = %v, want %v", tc.account, got, tc.want)
		}
		n, err := st.Count(ctx, "tiktok", "post", tc.account)
		if err != nil || n != len(tc.want) {
			t.Errorf("Count(%q) = %d, %v; want %d", tc.account, n, err, len(tc.want))
		}
	}
	l, _ := st.List(ctx, "tiktok", "post", "alice")
	if len(l) == 0 || string(l[0].Data) != `{"v":2}` || l[0].Account != "alice" {
		t.Errorf("List's first record: %+v, want the rewritten one", l)
	}
}

func testDelete(t *testing.T, st sim.State, _ *clocktest.Clock) {
	plain, withBlobs := key("code", "x"), key("upload", "y")
	put(t, st, sim.Record{Key: plain, Data: []byte(`{}`)}, sim.Record{Key: withBlobs, Account: "a", Data: []byte(`{}`), Blobs: true})
	err := st.Update(ctx, func(tx sim.Tx) error {
		if err := tx.Delete(plain); err != nil {
			return err
		}
		if err := tx.Delete(withBlobs); err != nil {
			return err
		}
		if _, found, err := tx.Get(plain); err != nil || found {
			return fmt.Errorf("a record deleted in the transaction was found: %v", err)
		}
		return tx.Delete(key("code", "never-written"))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []sim.Key{plain, withBlobs} {
		if _, found := mustGet(t, st, k); found {
			t.Errorf("%v was found after its deletion", k)
		}
	}
	if l, _ := st.List(ctx, "tiktok", "upload", "a"); len(l) != 0 {
		t.Errorf("a deleted record with blobs is listed: %v", ids(l))
	}
}

func testPurge(t *testing.T, st sim.State, clock *clocktest.Clock) {
	put(t, st,
		sim.Record{Key: key("code", "old"), Data: []byte(`{}`), Expires: clock.Now().Add(time.Minute)},
		sim.Record{Key: key("code", "new"), Data: []byte(`{}`), Expires: clock.Now().Add(time.Hour)},
		sim.Record{Key: key("code", "kept"), Data: []byte(`{}`)})
	clock.Advance(2 * time.Minute)
	if err := st.Purge(ctx, "tiktok", "code"); err != nil {
		t.Fatal(err)
	}
	if n, err := st.Count(ctx, "tiktok", "code", ""); err != nil || n != 2 {
		t.Errorf("after a purge, %d live codes (%v), want 2", n, err)
	}
}

func testEntries(t *testing.T, st sim.State, _ *clocktest.Clock) {
	entry := func(platform, account string, n int) sim.Entry {
		b, _ := json.Marshal(map[string]int{"n": n})
		return sim.Entry{Platform: platform, Account: account, Kind: simstate.EntryUpload, Data: b}
	}
	for i, e := range []sim.Entry{entry("tiktok", "a", 1), entry("tiktok", "b", 2), entry("youtube", "a", 3), entry("tiktok", "a", 4)} {
		err := st.Update(ctx, func(tx sim.Tx) error { return tx.Receive(e) })
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	ns := func(es []sim.Entry) []int {
		out := []int{}
		for _, e := range es {
			var v struct{ N int }
			_ = json.Unmarshal(e.Data, &v)
			out = append(out, v.N)
		}
		return out
	}
	for _, tc := range []struct {
		platform string
		accounts []string
		want     []int
	}{
		{"tiktok", nil, []int{1, 2, 4}},
		{"tiktok", []string{"a"}, []int{1, 4}},
		{"tiktok", []string{"a", "b"}, []int{1, 2, 4}},
		{"tiktok", []string{}, []int{}},
		{"youtube", []string{"a"}, []int{3}},
		{"", nil, []int{1, 2, 3, 4}},
	} {
		got, err := st.Entries(ctx, tc.platform, tc.accounts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ns(got), tc.want) {
			t.Errorf("Entries(%q, %v) = %v, want %v", tc.platform, tc.accounts, ns(got), tc.want)
		}
	}
}

// increment adds one to the counter record under k, whose first write creates it.
func increment(st sim.State, k sim.Key) error {
	return st.Update(ctx, func(tx sim.Tx) error {
		r, found, err := tx.Get(k)
		if err != nil {
			return err
		}
		var n int
		if found {
			if err := json.Unmarshal(r.Data, &n); err != nil {
				return err
			}
		}
		b, _ := json.Marshal(n + 1)
		return tx.Put(sim.Record{Key: k, Data: b})
	})
}

func concurrently(t *testing.T, n int, fn func() error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- fn()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func counter(t *testing.T, st sim.State, k sim.Key) int {
	t.Helper()
	r, found := mustGet(t, st, k)
	var n int
	if found {
		_ = json.Unmarshal(r.Data, &n)
	}
	return n
}

func testConcurrentUpdates(t *testing.T, st sim.State, _ *clocktest.Clock) {
	k := key("quota", "acct")
	put(t, st, sim.Record{Key: k, Data: []byte(`0`)})
	concurrently(t, 20, func() error { return increment(st, k) })
	if n := counter(t, st, k); n != 20 {
		t.Errorf("20 concurrent increments left %d: updates were lost", n)
	}
}

func testConcurrentInserts(t *testing.T, st sim.State, _ *clocktest.Clock) {
	k := key("quota", "fresh")
	concurrently(t, 20, func() error { return increment(st, k) })
	if n := counter(t, st, k); n != 20 {
		t.Errorf("20 concurrent increments of a new record left %d: first writes were lost", n)
	}
}
