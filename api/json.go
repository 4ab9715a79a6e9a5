package api

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// Load parses and validates the contract.
func Load() (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPIYAML)
	if err != nil {
		return nil, fmt.Errorf("api: parse openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("api: openapi.yaml is invalid: %w", err)
	}
	return doc, nil
}

// JSON returns the contract as JSON, the form served at /api/v1/openapi.json.
func JSON() ([]byte, error) {
	doc, err := Load()
	if err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}
