package sim

// What the simulators keep between requests lives in a State: in the database when reelay
// serves the sandbox (so that it survives a restart and every API process sees the same
// simulated platforms), in memory for the simulators' own tests and the providers'. Each
// simulator keeps its own structs, JSON-encoded, as records named by platform, kind and id;
// the bytes of uploads in progress go to blob storage (spool.go). What a simulator received
// (_introspect) is appended to the same State, in the transaction that changes the record it
// belongs to, so that it is counted once for each time the platform received it.
//
// How a simulator keeps its state (tiktoksim is the example with uploads, instagramsim the one
// with a background fetch):
//
//   - Its records are its own structs with exported, JSON-tagged fields, one kind per thing the
//     platform names (kinds as constants, with a key helper such as tiktokKey). A record that
//     expires on the platform has Expires (an upload URL's hour, a container's day), one with
//     blobs Blobs; the others are kept until housekeeping's retention.
//   - A request reads with Load or ListJSON (an account's records, oldest first), outside any
//     transaction. A change is one State.Update: LoadTx (which locks the record), the change,
//     Save; what the platform received is recorded with RecordTx in the same transaction, so
//     a retried request is not counted twice nor a crash once too few. An Update's function may
//     run twice: it only computes and uses its Tx, and sets the handler's answer afresh.
//   - A record time moves on (a processing that ended, a scheduled publish) is read with
//     LoadAdvanced, which writes the move once, by the first request to see it due.
//   - Daily caps and allowances are TakeInWindow records; a minute's rate limit may stay in
//     the process (a documented deviation: each process allows it).
//   - Ids are random (metasim.NewID, RandomDigits), never counted: another process, or the process
//     before a restart, must not hand out the same.
//   - An upload's bytes: ResumeSpool from the session's saved state, write the request's
//     bytes, then Spool.Save to a blob below BlobPrefix of the session's key before the
//     Update that moves the session on; after the last byte, check the spool as it is (its
//     chunks are read back) and DeleteBlobs once the Update committed.
//   - Work a platform does in the background runs under a lease any process takes over when it
//     lapses (metasim.Fetcher), and writes its result only while it holds the lease.
//   - A State error answers as the platform answers its own internal errors (tiktokInternal,
//     metasim.Internal).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"gocloud.dev/blob"

	"github.com/reelay/reelay/internal/platform/sim/simstate"
)

// The data of a State, shared with its implementations (simstate).
type (
	Key    = simstate.Key
	Record = simstate.Record
	Entry  = simstate.Entry
	Tx     = simstate.Tx
)

// State keeps the simulators' records and what they received.
type State interface {
	// Get reads a live record.
	Get(ctx context.Context, key Key) (Record, bool, error)
	// List reads the live records of one kind and account ("": every account), in the order
	// they were first written.
	List(ctx context.Context, platform, kind, account string) ([]Record, error)
	// Count counts the live records of one kind and account ("": every account).
	Count(ctx context.Context, platform, kind, account string) (int, error)
	// Update runs fn in one transaction and keeps what it wrote when it returns nil. fn may run
	// more than once (a transaction that conflicts with another's is tried again), so it must
	// do nothing but compute and use tx.
	Update(ctx context.Context, fn func(tx Tx) error) error
	// Purge deletes the expired records of one kind that have no blobs.
	Purge(ctx context.Context, platform, kind string) error
	// Entries lists what the simulator of platform ("": every one) received for accounts (nil:
	// every account), oldest first.
	Entries(ctx context.Context, platform string, accounts []string) ([]Entry, error)
}

// Load reads the record under key and decodes its data into a T.
func Load[T any](ctx context.Context, st State, key Key) (v T, rec Record, found bool, err error) {
	rec, found, err = st.Get(ctx, key)
	if err != nil || !found {
		return v, rec, false, err
	}
	if err := json.Unmarshal(rec.Data, &v); err != nil {
		return v, rec, false, fmt.Errorf("sim: record %s/%s/%s: %w", key.Platform, key.Kind, key.ID, err)
	}
	return v, rec, true, nil
}

// LoadTx is Load within a transaction: the record stays locked until it ends.
func LoadTx[T any](tx Tx, key Key) (v T, rec Record, found bool, err error) {
	rec, found, err = tx.Get(key)
	if err != nil || !found {
		return v, Record{Key: key}, false, err
	}
	if err := json.Unmarshal(rec.Data, &v); err != nil {
		return v, rec, false, fmt.Errorf("sim: record %s/%s/%s: %w", key.Platform, key.Kind, key.ID, err)
	}
	return v, rec, true, nil
}

// LoadAdvanced reads the record under key. When due says time has moved it on (a processing
// that ended), advance moves it within a transaction, recording what that publishes: the
// change is written once, by whichever request sees it first, and the others read it.
func LoadAdvanced[T any](ctx context.Context, st State, key Key, due func(v T) bool, advance func(tx Tx, v *T) error) (T, bool, error) {
	v, _, found, err := Load[T](ctx, st, key)
	if err != nil || !found || !due(v) {
		return v, found, err
	}
	err = st.Update(ctx, func(tx Tx) error {
		w, rec, found, err := LoadTx[T](tx, key)
		if err != nil || !found {
			return err
		}
		if err := advance(tx, &w); err != nil {
			return err
		}
		v = w
		return Save(tx, rec, w)
	})
	return v, true, err
}

// Save encodes v as rec's data and writes rec.
func Save(tx Tx, rec Record, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("sim: encode record %s/%s/%s: %w", rec.Platform, rec.Kind, rec.ID, err)
	}
	rec.Data = b
	return tx.Put(rec)
}

// ListJSON reads the live records of one kind (key's platform and kind) and account, decoded,
// in the order they were first written.
func ListJSON[T any](ctx context.Context, st State, kind Key, account string) ([]T, error) {
	recs, err := st.List(ctx, kind.Platform, kind.Kind, account)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(recs))
	for i, r := range recs {
		if err := json.Unmarshal(r.Data, &out[i]); err != nil {
			return nil, fmt.Errorf("sim: record %s/%s/%s: %w", r.Platform, r.Kind, r.ID, err)
		}
	}
	return out, nil
}

// TakeInWindow counts an event at now against those of the last window kept under key (a
// []time.Time of at most max, the record expiring with its last): it answers false, and
// writes nothing, when max are already in the window. Daily caps and allowances are kept so.
func TakeInWindow(tx Tx, key Key, account string, now time.Time, window time.Duration, max int) (bool, error) {
	times, _, _, err := LoadTx[[]time.Time](tx, key)
	if err != nil {
		return false, err
	}
	if times = PruneBefore(times, now.Add(-window)); len(times) >= max {
		return false, nil
	}
	times = append(times, now)
	return true, Save(tx, Record{Key: key, Account: account, Expires: now.Add(window)}, times)
}

// RecordTx appends what the simulator of platform received: an Upload, a Published or a Reply.
func RecordTx(tx Tx, platform string, v any) error {
	var e Entry
	switch v := v.(type) {
	case Upload:
		e = Entry{Account: v.Account, Kind: simstate.EntryUpload}
	case Published:
		e = Entry{Account: v.Account, Kind: simstate.EntryPublished}
	case Reply:
		e = Entry{Account: v.Account, Kind: simstate.EntryReply}
	default:
		return fmt.Errorf("sim: receive %T", v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e.Platform, e.Data = platform, b
	return tx.Receive(e)
}

// errNoState marks a failure of the simulator's State or blob storage: the simulator's fault,
// answered as the platform answers its own internal errors.
var errNoState = errors.New("simulator state")

// stateErr wraps a State failure with errNoState.
func stateErr(err error) error {
	if err == nil || errors.Is(err, errNoState) {
		return err
	}
	return fmt.Errorf("%w: %w", errNoState, err)
}

// BlobPrefix is where the blobs of the record under key are stored (simstate.BlobPrefix).
func BlobPrefix(key Key) string { return simstate.BlobPrefix(key) }

// DeleteBlobs deletes the blobs of the record under key (simstate.DeleteBlobs).
func DeleteBlobs(ctx context.Context, bucket *blob.Bucket, key Key) error {
	return simstate.DeleteBlobs(ctx, bucket, key)
}

// NewMemoryState returns a State in memory, whose records expire by now: what the simulators
// keep when they are given no State (tests).
func NewMemoryState(now func() time.Time) State {
	if now == nil {
		now = time.Now
	}
	return &memState{now: now, recs: map[Key]memRecord{}}
}

// memState is the State in memory. An update holds the one lock for its whole run: the
// simulators' tests need correctness, not concurrency.
type memState struct {
	now func() time.Time

	mu      sync.Mutex
	seq     int64
	recs    map[Key]memRecord
	entries []Entry
}

type memRecord struct {
	Record
	seq int64
}

func copyRecord(r Record) Record {
	r.Data = slices.Clone(r.Data)
	return r
}

func (m *memState) Get(_ context.Context, key Key) (Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[key]
	if !ok || !r.Live(m.now()) {
		return Record{}, false, nil
	}
	return copyRecord(r.Record), true, nil
}

func (m *memState) live(platform, kind, account string) []memRecord {
	now := m.now()
	var out []memRecord
	for _, r := range m.recs {
		if r.Platform == platform && r.Kind == kind && (account == "" || r.Account == account) && r.Live(now) {
			out = append(out, r)
		}
	}
	return out
}

func (m *memState) List(_ context.Context, platform, kind, account string) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	found := m.live(platform, kind, account)
	slices.SortFunc(found, func(a, b memRecord) int { return int(a.seq - b.seq) })
	out := make([]Record, len(found))
	for i, r := range found {
		out[i] = copyRecord(r.Record)
	}
	return out, nil
}

func (m *memState) Count(_ context.Context, platform, kind, account string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live(platform, kind, account)), nil
}

func (m *memState) Purge(_ context.Context, platform, kind string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for k, r := range m.recs {
		if k.Platform == platform && k.Kind == kind && !r.Blobs && !r.Live(now) {
			delete(m.recs, k)
		}
	}
	return nil
}

func (m *memState) Entries(_ context.Context, platform string, accounts []string) ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []Entry{}
	for _, e := range m.entries {
		if (platform == "" || e.Platform == platform) && (accounts == nil || slices.Contains(accounts, e.Account)) {
			e.Data = slices.Clone(e.Data)
			out = append(out, e)
		}
	}
	return out, nil
}

func (m *memState) Update(_ context.Context, fn func(tx Tx) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	tx := &memTx{m: m, now: m.now(), writes: map[Key]*Record{}}
	if err := fn(tx); err != nil {
		return err
	}
	for _, k := range tx.order {
		w := tx.writes[k]
		if w == nil {
			delete(m.recs, k)
			continue
		}
		r, ok := m.recs[k]
		if !ok {
			m.seq++
			r.seq = m.seq
		}
		w.Blobs = w.Blobs || r.Blobs
		r.Record = *w
		m.recs[k] = r
	}
	m.entries = append(m.entries, tx.entries...)
	return nil
}

// memTx stages an update's writes, applied only when its function succeeds.
type memTx struct {
	m       *memState
	now     time.Time
	writes  map[Key]*Record // nil: deleted
	order   []Key
	entries []Entry
}

func (t *memTx) Get(key Key) (Record, bool, error) {
	if w, ok := t.writes[key]; ok {
		if w == nil || !w.Live(t.now) {
			return Record{}, false, nil
		}
		return copyRecord(*w), true, nil
	}
	r, ok := t.m.recs[key]
	if !ok || !r.Live(t.now) {
		return Record{}, false, nil
	}
	return copyRecord(r.Record), true, nil
}

func (t *memTx) stage(key Key, r *Record) {
	if _, ok := t.writes[key]; !ok {
		t.order = append(t.order, key)
	}
	t.writes[key] = r
}

func (t *memTx) Put(rec Record) error {
	rec = copyRecord(rec)
	t.stage(rec.Key, &rec)
	return nil
}

func (t *memTx) Delete(key Key) error {
	r, found, _ := t.Get(key)
	if !found {
		if _, ok := t.m.recs[key]; !ok {
			return nil
		}
	}
	if found && (r.Blobs || t.m.recs[key].Blobs) {
		// Expired instead, as the interface says: housekeeping deletes its blobs with it.
		r.Expires, r.Blobs = t.now, true
		t.stage(key, &r)
		return nil
	}
	t.stage(key, nil)
	return nil
}

func (t *memTx) Receive(e Entry) error {
	e.Data = slices.Clone(e.Data)
	t.entries = append(t.entries, e)
	return nil
}

var _ State = (*memState)(nil)
