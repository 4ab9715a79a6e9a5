// Package e2e holds end-to-end tests that run the reelay binary as real processes: a server
// killed with SIGKILL in the middle of an upload and restarted on the same SQLite database, and
// one API process with two worker processes sharing PostgreSQL and S3. The platform
// simulators live in the test process (or in the API process) so that they outlive the
// servers and can tell how many times each video arrived. sandbox_test.go uses the server's own
// simulators instead, whose state is in the database: through a SIGKILL and a restart, and
// shared by two API processes behind a load balancer.
//
// fleet_test.go runs a whole fleet, two API and two worker processes on PostgreSQL and S3
// (SeaweedFS), and kills a worker during uploads and an API process during a multipart publish,
// shows the rate limit shared by API processes, and drains a burst of 500 scheduled posts.
//
// blueskypds_test.go runs a server against a peer reelay's authors did not write: the
// reference Bluesky PDS from npm (testdata/peers/bluesky-pds), with Node.js.
//
// The tests build ./cmd/reelay once (TestMain) and are skipped with -short.
package e2e
