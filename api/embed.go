// Package api holds reelay's HTTP contract: the OpenAPI 3.0.3 document that
// describes every endpoint, request and response of the service.
//
// The server serves it at GET /api/v1/openapi.json, and handler tests
// validate every response they receive against it, so the document and the
// server cannot drift apart.
package api

import _ "embed"

// OpenAPIYAML is the OpenAPI 3.0.3 document of the reelay API, as written in
// api/openapi.yaml.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte
