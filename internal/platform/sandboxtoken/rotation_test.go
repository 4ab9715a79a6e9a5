package sandboxtoken

import (
	"bytes"
	"testing"
	"time"
)

// TestMintPreviousKeys: tokens signed under a previous key verify while the Mint holds it as a
// previous key, and not once it is dropped; new tokens are signed with the current key.
func TestMintPreviousKeys(t *testing.T) {
	t.Parallel()
	keyA, keyB, keyC := bytes.Repeat([]byte{0xa}, 32), bytes.Repeat([]byte{0xb}, 32), bytes.Repeat([]byte{0xc}, 32)
	exp := time.Unix(1_900_000_000, 0)
	oldMint := Mint{Key: keyA, Platform: "youtube"}
	rotating := Mint{Key: keyB, Platform: "youtube", Previous: [][]byte{keyC, keyA}}
	for _, tc := range []struct {
		name         string
		mint         Mint
		access       string
		refresh      string
		wantVerified bool
	}{
		{"previous key", rotating, oldMint.Access("sbx_1", exp), oldMint.Refresh("sbx_1"), true},
		{"channel token, previous key", rotating, Token(keyA, "youtube", "sbx_1"), oldMint.Refresh("sbx_1"), true},
		{"current key", rotating, rotating.Access("sbx_1", exp), rotating.Refresh("sbx_1"), true},
		{"previous key dropped", Mint{Key: keyB, Platform: "youtube"}, oldMint.Access("sbx_1", exp), oldMint.Refresh("sbx_1"), false},
		{"new tokens are the current key's", oldMint, rotating.Access("sbx_1", exp), rotating.Refresh("sbx_1"), false},
		{"other platform", Mint{Key: keyB, Platform: "tiktok", Previous: [][]byte{keyA}}, oldMint.Access("sbx_1", exp), oldMint.Refresh("sbx_1"), false},
	} {
		account, _, ok := tc.mint.ParseAccessToken(tc.access)
		if ok != tc.wantVerified || (ok && account != "sbx_1") {
			t.Errorf("%s: ParseAccessToken = %q, %v; want verified %v", tc.name, account, ok, tc.wantVerified)
		}
		account, ok = tc.mint.RefreshAccount(tc.refresh)
		if ok != tc.wantVerified || (ok && account != "sbx_1") {
			t.Errorf("%s: RefreshAccount = %q, %v; want verified %v", tc.name, account, ok, tc.wantVerified)
		}
	}
	if rotating.ClientSecret() != (Mint{Key: keyB, Platform: "youtube"}).ClientSecret() {
		t.Error("the client secret depends on the previous keys")
	}
}
