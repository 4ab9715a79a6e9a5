package youtubesim

import (
	"net/http"
	"strings"
)

// ytScopes are the scopes a sandbox consent grants: what tokeninfo answers.
var ytScopes = []string{"https://www.googleapis.com/auth/youtube.upload", "https://www.googleapis.com/auth/youtube.readonly",
	"https://www.googleapis.com/auth/youtube.force-ssl", "https://www.googleapis.com/auth/yt-analytics.readonly"}

// tokeninfo is Google's token information endpoint (https://oauth2.googleapis.com/tokeninfo),
// served at the simulator's root as its token endpoint is: GET ?access_token= answers the
// token's scope (space-separated) and seconds left (expires_in); a token Google does not know
// answers 400 invalid_token
// (https://developers.google.com/identity/sign-in/web/backend-auth#calling-the-tokeninfo-endpoint,
// and the OAuth 2.0 v2 API's Tokeninfo: scope, expires_in).
func (s *ytSim) tokeninfo(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		ytWriteJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request"})
		return
	}
	token := r.URL.Query().Get("access_token")
	if token == "" {
		token = r.FormValue("access_token")
	}
	acct, ok := s.cfg.Accounts.Resolve(r.Context(), token)
	if token == "" || !ok {
		ytWriteJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_token", "error_description": "Invalid Value"})
		return
	}
	scopes := ytScopes
	if granted, ok := s.opt.Scopes[acct.ID]; ok {
		scopes = granted
	}
	ytWriteJSON(w, http.StatusOK, map[string]any{"aud": "sandbox", "sub": acct.ID, "scope": strings.Join(scopes, " "),
		"expires_in": "3599", "access_type": "offline"})
}
