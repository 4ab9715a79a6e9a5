package sim_test

import "github.com/reelay/reelay/internal/platform/sim/simtest"

// metaSeeds are the Graph API requests common to Instagram, Facebook and Threads.
func metaSeeds(id string, edges ...simtest.FuzzSeed) []simtest.FuzzSeed {
	out := []simtest.FuzzSeed{
		{"GET", "/v21.0/" + id + "?fields=id,username&access_token=tok", "", ""},
		{"GET", "/v21.0/me/accounts?access_token=tok", "", ""},
		{"GET", "/v21.0/" + id + "/insights?metric=views,likes&period=lifetime", simtest.FuzzBearer, ""},
		{"GET", "/v21.0/" + id + "/comments?limit=5000&after=xyz", simtest.FuzzBearer, ""},
		{"POST", "/v21.0/" + id + "?hide=true", simtest.FuzzForm, "hide=maybe"},
		{"DELETE", "/v21.0/" + id, simtest.FuzzBearer, ""},
	}
	return append(out, edges...)
}
