package platform

// Publish options as GET /channels/{id}/options shows them (Description.StaticOptions, and
// the providers' live options): every option has the same shape, "type" (string, boolean,
// integer), and where they apply "choices", "default", "required" and "note".

// Option builds one option description. A nil choices or def is left out.
func Option(typ string, choices []any, def any) map[string]any {
	o := map[string]any{"type": typ}
	if choices != nil {
		o["choices"] = choices
	}
	if def != nil {
		o["default"] = def
	}
	return o
}

// WithNote adds a human-readable note to an option.
func WithNote(o map[string]any, note string) map[string]any {
	o["note"] = note
	return o
}

// Required marks an option the publish request must give.
func Required(o map[string]any) map[string]any {
	o["required"] = true
	return o
}
