package connect

import (
	"bytes"
	"testing"
)

// TestStatePreviousKeys: a consent started before a key rotation comes back with a state signed
// by the previous key, which verifies while that key is a previous one; new states use the
// current key.
func TestStatePreviousKeys(t *testing.T) {
	t.Parallel()
	keyA, keyB, keyC := bytes.Repeat([]byte{0xa}, 32), bytes.Repeat([]byte{0xb}, 32), bytes.Repeat([]byte{0xc}, 32)
	stateA := (&Connector{StateKey: keyA}).signState("flow-1")
	stateB := (&Connector{StateKey: keyB, PreviousStateKeys: [][]byte{keyA}}).signState("flow-1")
	for _, tc := range []struct {
		name  string
		c     *Connector
		state string
		valid bool
	}{
		{"current key", &Connector{StateKey: keyB, PreviousStateKeys: [][]byte{keyA}}, stateB, true},
		{"previous key", &Connector{StateKey: keyB, PreviousStateKeys: [][]byte{keyC, keyA}}, stateA, true},
		{"previous key dropped", &Connector{StateKey: keyB}, stateA, false},
		{"new state is the current key's", &Connector{StateKey: keyA}, stateB, false},
		{"unknown key", &Connector{StateKey: keyC, PreviousStateKeys: [][]byte{keyB}}, stateA, false},
		{"no MAC", &Connector{StateKey: keyB, PreviousStateKeys: [][]byte{keyA}}, "flow-1", false},
	} {
		id, valid := tc.c.verifyState(tc.state)
		if valid != tc.valid || (valid && id != "flow-1") {
			t.Errorf("%s: verifyState = %q, %v; want valid %v", tc.name, id, valid, tc.valid)
		}
	}
}
