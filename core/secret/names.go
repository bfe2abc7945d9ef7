// Package secret decides what is credential-shaped and how a secret is
// shown.
//
// Two different tests live here, and they must not be confused:
//
//   - IsCredentialName and IsCredentialHeader decide by a NAME (a variable,
//     env key or header key). That decision is authoritative: definition
//     materialization records every stretch a credential-shaped variable
//     produced, and every value under a credential-shaped key, as secret;
//     the fingerprint replaces those with markers naming their source, and
//     every display masks them.
//   - MaskLiterals guesses by a literal's SHAPE (ghp_…, sk-…, JWTs, …). It
//     is a guess, so it serves display only and never the fingerprint: two
//     different literal tokens mask alike, and a fingerprint blind to a
//     changed token would carry an old approval over to it.
//
// Everything here is pure and safe for concurrent use.
package secret

import (
	"bytes"
	"strings"
)

// credentialWords are the words that make a name credential-shaped when
// one of its words equals them (compared upper-case).
var credentialWords = map[string]bool{
	"TOKEN":         true,
	"SECRET":        true,
	"PASSWORD":      true,
	"PASSWD":        true,
	"PWD":           true,
	"PASS":          true,
	"AUTH":          true,
	"AUTHORIZATION": true,
	"CREDENTIAL":    true,
	"CREDENTIALS":   true,
	"CREDS":         true,
	"COOKIE":        true,
	"SESSION":       true,
	"APIKEY":        true,
	"PAT":           true,
	"DSN":           true,
}

// credentialPhrases make a name credential-shaped when its normalised form
// (words upper-cased and joined with "_") contains one of them.
var credentialPhrases = []string{"API_KEY", "ACCESS_KEY", "PRIVATE_KEY", "CLIENT_SECRET"}

// credentialHeaders are header names (lower-case) that always carry a
// credential, whatever the word rule says.
var credentialHeaders = map[string]bool{
	"authorization":       true,
	"proxy-authorization": true,
	"cookie":              true,
	"set-cookie":          true,
	"x-api-key":           true,
	"api-key":             true,
	"x-auth-token":        true,
}

// IsCredentialName reports whether a variable or env key name is
// credential-shaped.
//
// The name is split into words at every character that is not an ASCII
// letter or digit (so "_", "-" and "." and anything else separate words),
// at camelCase boundaries ("apiKey" → api, Key; "APIKey" → API, Key) and
// between letters and digits ("TOKEN2" → TOKEN, 2). Words compare
// case-insensitively. The name is credential-shaped when
//
//   - a word is TOKEN, SECRET, PASSWORD, PASSWD, PWD, PASS, AUTH,
//     AUTHORIZATION, CREDENTIAL, CREDENTIALS, CREDS, COOKIE, SESSION,
//     APIKEY, PAT or DSN; or
//   - the words, upper-cased and joined with "_", contain API_KEY,
//     ACCESS_KEY, PRIVATE_KEY or CLIENT_SECRET; or
//   - its last word that is not all digits is KEY ("SSH_KEY", "SSH_KEY_2").
//
// So GITHUB_TOKEN, apiKey, OPENAI_API_KEY, db.password, x-auth-token and
// SSH_KEY are credential-shaped; PATH, HOME, NODE_OPTIONS, KEYBOARD_LAYOUT,
// MONKEY and TOKENIZER_MODEL are not. A false positive only hides a value
// from display and keeps it out of the fingerprint, so the rule leans that
// way. The empty name is not credential-shaped.
func IsCredentialName(name string) bool {
	var spans [maxFastWords][2]int
	n, ok := wordSpans(name, &spans)
	if !ok {
		return isCredentialNameWords(splitWords(name))
	}
	if n == 0 {
		return false
	}
	// The words, upper-cased and joined with "_", built on the stack; each
	// word is tested as it is appended.
	var buf [maxFastJoined]byte
	joined := buf[:0]
	for i, sp := range spans[:n] {
		if i > 0 {
			joined = append(joined, '_')
		}
		start := len(joined)
		for _, c := range []byte(name[sp[0]:sp[1]]) {
			if isLower(c) {
				c -= 'a' - 'A'
			}
			joined = append(joined, c)
		}
		if credentialWords[string(joined[start:])] { // indexing by a converted []byte does not allocate
			return true
		}
		spans[i] = [2]int{start, len(joined)} // from here on, offsets into joined
	}
	for _, p := range credentialPhrases {
		if bytes.Contains(joined, []byte(p)) {
			return true
		}
	}
	for i := n - 1; i >= 0; i-- {
		w := joined[spans[i][0]:spans[i][1]]
		if allDigitBytes(w) {
			continue
		}
		return string(w) == "KEY"
	}
	return false
}

// maxFastWords and maxFastJoined bound the names IsCredentialName decides
// without allocating; other names take the same rule through splitWords
// and isCredentialNameWords.
const (
	maxFastWords  = 16
	maxFastJoined = 128
)

// wordSpans stores in spans the [start, end) offsets in name of the words
// splitWords returns, and returns their count. It returns false when name
// has more than maxFastWords words or their joined form would be longer
// than maxFastJoined bytes.
func wordSpans(name string, spans *[maxFastWords][2]int) (int, bool) {
	n, joinedLen := 0, -1
	start := -1 // offset of the current word, -1 between words
	flush := func(end int) bool {
		if start < 0 {
			return true
		}
		if n == maxFastWords {
			return false
		}
		joinedLen += end - start + 1
		spans[n] = [2]int{start, end}
		n++
		start = -1
		return true
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) {
			if !flush(i) {
				return 0, false
			}
			continue
		}
		if start >= 0 {
			// The same boundaries as splitWords: letter/digit, camelCase,
			// and an acronym followed by a word.
			prev := name[i-1]
			if isDigit(prev) != isDigit(c) ||
				isLower(prev) && isUpper(c) ||
				isUpper(prev) && isUpper(c) && i+1 < len(name) && isLower(name[i+1]) {
				if !flush(i) {
					return 0, false
				}
			}
		}
		if start < 0 {
			start = i
		}
	}
	if !flush(len(name)) || joinedLen > maxFastJoined {
		return 0, false
	}
	return n, true
}

// isCredentialNameWords is IsCredentialName's rule over the words
// splitWords returns, written plainly: the fallback for long names and
// the reference the allocation-free path is tested against.
func isCredentialNameWords(words []string) bool {
	if len(words) == 0 {
		return false
	}
	for _, w := range words {
		if credentialWords[w] {
			return true
		}
	}
	joined := strings.Join(words, "_")
	for _, p := range credentialPhrases {
		if strings.Contains(joined, p) {
			return true
		}
	}
	for i := len(words) - 1; i >= 0; i-- {
		if allDigits(words[i]) {
			continue
		}
		return words[i] == "KEY"
	}
	return false
}

// IsCredentialHeader reports whether an HTTP header name is
// credential-shaped: Authorization, Proxy-Authorization, Cookie,
// Set-Cookie, X-Api-Key, Api-Key and X-Auth-Token (case-insensitively),
// and any header whose name IsCredentialName.
func IsCredentialHeader(name string) bool {
	return isCredentialHeaderName(name) || IsCredentialName(name)
}

// isCredentialHeaderName reports whether strings.ToLower(name) is in
// credentialHeaders. An ASCII name is lower-cased on the stack; any other
// goes through strings.ToLower itself, since Unicode lower-casing can turn
// non-ASCII letters into ASCII ones (the Kelvin sign into "k").
func isCredentialHeaderName(name string) bool {
	var buf [len("proxy-authorization")]byte // the longest entry
	ascii := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 0x80 {
			ascii = false
			break
		}
		if i < len(buf) {
			if isUpper(c) {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
	}
	switch {
	case !ascii:
		return credentialHeaders[strings.ToLower(name)]
	case len(name) > len(buf):
		return false // longer than every entry
	default:
		return credentialHeaders[string(buf[:len(name)])]
	}
}

// splitWords splits name into upper-cased words as IsCredentialName
// documents.
func splitWords(name string) []string {
	var words []string
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToUpper(string(cur)))
			cur = cur[:0]
		}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) {
			flush()
			continue
		}
		if len(cur) > 0 {
			prev := cur[len(cur)-1]
			switch {
			case isDigit(prev) != isDigit(c):
				// letter/digit boundary
				flush()
			case isLower(prev) && isUpper(c):
				// camelCase: "apiKey"
				flush()
			case isUpper(prev) && isUpper(c) && i+1 < len(name) && isLower(name[i+1]):
				// acronym followed by a word: "APIKey" → API, Key
				flush()
			}
		}
		cur = append(cur, c)
	}
	flush()
	return words
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isAlnum(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) }

func allDigitBytes(w []byte) bool {
	for _, c := range w {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

func allDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if !isDigit(w[i]) {
			return false
		}
	}
	return true
}
