// Package simstate holds the data the platform simulators keep between requests, in the shape
// every implementation of sim.State shares: the records and the entries of what the simulators
// received, and where a record's blobs are (blobs.go). It is a package of its own, with nothing
// but the standard library and the blob API, so that the store can implement sim.State, and
// housekeeping delete what the simulators left, without depending on the simulators.
package simstate

import (
	"errors"
	"time"
)

// Key names a record: the simulated platform, the kind of thing (an upload session, a
// container, a post, an OAuth code) and its id there.
type Key struct {
	Platform, Kind, ID string
}

// Record is one thing a simulator keeps: the simulator's own struct, JSON-encoded in Data.
type Record struct {
	Key
	// Account is the simulated account the record belongs to (what List selects by); "" for
	// records of no account.
	Account string
	Data    []byte
	// Expires is when the record ends: from then on it is invisible, and housekeeping deletes
	// it. The zero time keeps it until housekeeping's retention of unchanged records.
	Expires time.Time
	// Blobs says the simulator may have stored blobs under the record's blob prefix, which
	// housekeeping deletes with it. Once set it stays set.
	Blobs bool
}

// Live reports whether the record has not expired at now.
func (r Record) Live(now time.Time) bool { return r.Expires.IsZero() || now.Before(r.Expires) }

// Entry is one thing a simulator received, as GET /sandbox/{platform}/_introspect shows it.
// Entries are only ever appended: an upload repeated after a crash is there twice.
type Entry struct {
	Platform string
	Account  string
	// Kind is EntryUpload, EntryPublished or EntryReply; Data the JSON of what was received.
	Kind string
	Data []byte
}

// Entry kinds.
const (
	EntryUpload    = "upload"
	EntryPublished = "published"
	EntryReply     = "reply"
)

// Tx is one transaction of a State's Update: what it reads stays locked until the transaction
// ends, and what it writes is kept only if the update's function returns nil.
type Tx interface {
	// Get reads a live record and locks it for the rest of the transaction.
	Get(key Key) (Record, bool, error)
	// Put writes a record, inserting it or replacing the one with its key.
	Put(rec Record) error
	// Delete removes a record; one with blobs is expired instead, so that housekeeping
	// deletes its blobs with it.
	Delete(key Key) error
	// Receive appends an entry of what a simulator received.
	Receive(e Entry) error
}

// ErrTooManyRetries is the answer of an Update whose transaction kept conflicting with others.
var ErrTooManyRetries = errors.New("simstate: the update conflicted with others too many times")
