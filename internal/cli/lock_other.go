//go:build !unix

package cli

// lockDatabase is a no-op where flock is missing; one server per SQLite file is then the
// operator's duty.
func lockDatabase(string) (func(), error) { return func() {}, nil }
