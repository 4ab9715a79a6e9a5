package store

import (
	"context"
	"database/sql"
)

// OpenMigratedTo opens a store with reelay's migrations applied up to version and no further
// (River's not at all), so that a test can write rows as an older schema held them and then
// let Open migrate the rest.
func OpenMigratedTo(ctx context.Context, databaseURL string, version int64) (*Store, error) {
	var s *Store
	var err error
	if isPostgresURL(databaseURL) {
		s, err = openPostgres(ctx, databaseURL)
	} else {
		s, err = openSQLite(databaseURL)
	}
	if err != nil {
		return nil, err
	}
	p, err := s.gooseProvider()
	if err == nil {
		_, err = p.UpTo(ctx, version)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// WriteDB is the store's write handle, for tests that need SQL of their own.
func (s *Store) WriteDB() *sql.DB { return s.write }

// InGroupTx is inGroupTx, for tests of group commit.
func (s *Store) InGroupTx(ctx context.Context, fn func(tx *Tx) error) error {
	return s.inGroupTx(ctx, fn)
}
