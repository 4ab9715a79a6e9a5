package metagraph

import (
	"encoding/json"
	"testing"
)

// The status fields differ by platform (Instagram: status_code and status; Threads: status and
// error_message). containerStatus must read them as the providers' structs did: a field absent
// or null in an answer keeps what an earlier read gave, and a value that is not a string is an
// error.
func TestContainerStatusDecoding(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		status, detail         string
		answers                []string
		wantStatus, wantDetail string
		wantErr                bool
	}{
		{"instagram fields", "status_code", "status", []string{`{"status_code":"ERROR","status":"Error: code 2207052","id":"1"}`}, "ERROR", "Error: code 2207052", false},
		{"threads fields", "status", "error_message", []string{`{"status":"ERROR","error_message":"FAILED_DOWNLOADING_VIDEO"}`}, "ERROR", "FAILED_DOWNLOADING_VIDEO", false},
		{"threads' status is not instagram's detail", "status", "error_message", []string{`{"status_code":"FINISHED","status":"IN_PROGRESS"}`}, "IN_PROGRESS", "", false},
		{"absent field keeps the earlier read", "status_code", "status", []string{`{"status_code":"FINISHED","status":"x"}`, `{"id":"1"}`}, "FINISHED", "x", false},
		{"null keeps the earlier read", "status_code", "status", []string{`{"status_code":"FINISHED"}`, `{"status_code":null}`}, "FINISHED", "", false},
		{"a later read replaces", "status", "error_message", []string{`{"status":"FINISHED"}`, `{"status":"PUBLISHED"}`}, "PUBLISHED", "", false},
		{"not a string", "status", "error_message", []string{`{"status":3}`}, "", "", true},
		{"not an object", "status", "error_message", []string{`[]`}, "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := containerStatus{statusField: tc.status, detailField: tc.detail}
			var err error
			for _, a := range tc.answers {
				if err = json.Unmarshal([]byte(a), &c); err != nil {
					break
				}
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error: %v", err, tc.wantErr)
			}
			if !tc.wantErr && (c.status != tc.wantStatus || c.detail != tc.wantDetail) {
				t.Errorf("read status %q, detail %q; want %q, %q", c.status, c.detail, tc.wantStatus, tc.wantDetail)
			}
		})
	}
}
