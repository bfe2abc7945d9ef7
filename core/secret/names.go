// Package secret decides what is credential-shaped and how a secret is
// shown.
//
// Two different tests live here, and they must not be confused:
//
//   - IsCredentialName and IsCredentialHeader decide by a NAME (a variable,
//     env key or header key), and IsCredentialFlag by a command-line flag.
//     That decision is authoritative: definition materialization records
//     every stretch a credential-shaped variable produced, every value
//     under a credential-shaped key and every argument after a
//     credential-shaped flag as secret. The fingerprint leaves out the
//     EXPANDED value of such a stretch (so rotating a credential keeps an
//     approval) but hashes everything written (the variable's name, its
//     default, every literal); every display masks the expanded value; and
//     a credential-shaped variable may never decide what runs or where it
//     connects (a command, a cwd, a URL's scheme, host or port).
//   - MaskLiterals guesses by a literal's SHAPE (ghp_…, sk-…, JWTs, …) or by
//     where it stands (after "Bearer ", --token=, ?token=, API_KEY=). It is
//     a guess, so it serves display only and never the fingerprint: two
//     different literal tokens mask alike, and a fingerprint blind to a
//     changed token would carry an old approval over to it. It masks the
//     exact extent of the token and never the text around it, so code
//     written next to a credential (after a PEM block, behind AUTH=) stays
//     visible.
//
// # Which names are credential-shaped
//
// A name is split into words (see IsCredentialName). It is credential-shaped
// when a word is a credential word (TOKEN, SECRET, PASSWORD, AUTH, SESSION,
// COOKIE, …), its words contain a credential phrase (API_KEY, ACCESS_KEY,
// PRIVATE_KEY, CLIENT_SECRET), or its last word is KEY; with these
// exceptions, each because such a name holds something that is not the
// credential itself, and whose value therefore must stay visible, hashed,
// and free to name what runs:
//
//   - a name whose last word (digits aside) DESCRIBES a credential rather
//     than holding it: where it is (FILE, PATH, DIR, SOCK, SOCKET, URL, URI,
//     ENDPOINT, HOST, PORT, ADDR, ADDRESS, SERVER, …), how it behaves
//     (LENGTH, SIZE, COUNT, TTL, TIMEOUT, EXPIRY, LIFETIME, INTERVAL, MODE,
//     TYPE, METHOD, SCHEME, FORMAT, ALGORITHM, ENABLED, DISABLED, REQUIRED,
//     STDIN, …) or what it is called (NAME): SSH_AUTH_SOCK (the agent's
//     socket), GITHUB_TOKEN_FILE, PRIVATE_KEY_PATH, OAUTH_TOKEN_URL,
//     SESSION_TIMEOUT, AUTH_MODE, DBUS_SESSION_BUS_ADDRESS;
//   - a name whose first word is NO (a negated switch: NO_AUTH, --no-auth);
//   - PWD and OLDPWD, the shell's working directories.
//
// The list of descriptor words is descriptorWords. A name none of these
// rules covers is not credential-shaped. A false positive hides a value
// from display, keeps its expansion out of the fingerprint and refuses it
// where it would decide what runs; a false negative shows and hashes it. The
// rule leans towards hiding, except for the descriptor names above, whose
// values are paths, addresses and settings a reviewer must see.
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

// descriptorWords are the words that, as the last word of a name (digits
// aside), make it name something ABOUT a credential rather than the
// credential itself: where it is, how it behaves, what it is called. Such a
// name is never credential-shaped (see the package documentation).
var descriptorWords = map[string]bool{
	// Where it is: a path, a socket, an address.
	"FILE": true, "FILES": true, "FILENAME": true, "PATH": true, "PATHS": true, "DIR": true, "DIRS": true,
	"DIRECTORY": true, "FOLDER": true, "SOCK": true, "SOCKET": true, "URL": true, "URLS": true, "URI": true,
	"ENDPOINT": true, "HOST": true, "HOSTNAME": true, "PORT": true, "ADDR": true, "ADDRESS": true, "SERVER": true,
	// How it behaves.
	"LENGTH": true, "LEN": true, "SIZE": true, "COUNT": true, "TTL": true, "TIMEOUT": true, "EXPIRY": true,
	"EXPIRES": true, "EXPIRATION": true, "LIFETIME": true, "DURATION": true, "INTERVAL": true, "AGE": true,
	"MODE": true, "TYPE": true, "KIND": true, "METHOD": true, "SCHEME": true, "FORMAT": true, "ALGORITHM": true,
	"ALG": true, "ENABLED": true, "DISABLED": true, "ENABLE": true, "DISABLE": true, "REQUIRED": true,
	"STDIN": true, "VERSION": true, "LEVEL": true,
	// What it is called.
	"NAME": true,
}

// exemptWords reports whether the upper-cased words of a name (split as
// IsCredentialName documents; word(i) returns the i-th of n) make it
// exempt from the credential rules: a last word (digits aside) in
// descriptorWords, a first word NO, or the name PWD or OLDPWD.
func exemptWords(n int, word func(int) string) bool {
	if n == 0 {
		return false
	}
	if w := word(0); w == "NO" || n == 1 && (w == "PWD" || w == "OLDPWD") {
		return true
	}
	for i := n - 1; i >= 0; i-- {
		if w := word(i); !allDigits(w) {
			return descriptorWords[w]
		}
	}
	return false
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
//   - its last word that is not all digits is KEY ("SSH_KEY", "SSH_KEY_2");
//
// unless it is exempt: its last word that is not all digits is one of
// descriptorWords (FILE, PATH, DIR, SOCK, URL, ENDPOINT, HOST, PORT,
// LENGTH, TIMEOUT, MODE, TYPE, NAME, …), its first word is NO, or it is
// PWD or OLDPWD (see the package documentation for why).
//
// So GITHUB_TOKEN, apiKey, OPENAI_API_KEY, db.password, x-auth-token and
// SSH_KEY are credential-shaped; PATH, HOME, NODE_OPTIONS, KEYBOARD_LAYOUT,
// MONKEY, TOKENIZER_MODEL, SSH_AUTH_SOCK, GITHUB_TOKEN_FILE,
// PRIVATE_KEY_PATH, AUTH_MODE, SESSION_TIMEOUT, NO_AUTH and PWD are not.
// The empty name is not credential-shaped.
func IsCredentialName(name string) bool {
	var spans [maxFastWords][2]int
	n, ok := wordSpans(name, &spans)
	if !ok {
		return isCredentialNameWords(splitWords(name))
	}
	if n == 0 {
		return false
	}
	// The words, upper-cased and joined with "_", built on the stack.
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
		spans[i] = [2]int{start, len(joined)} // from here on, offsets into joined
	}
	word := func(i int) []byte { return joined[spans[i][0]:spans[i][1]] }
	// Indexing a map by a converted []byte does not allocate; neither do
	// these comparisons.
	if w := word(0); string(w) == "NO" || n == 1 && (string(w) == "PWD" || string(w) == "OLDPWD") {
		return false
	}
	last := -1
	for i := n - 1; i >= 0; i-- {
		if !allDigitBytes(word(i)) {
			last = i
			break
		}
	}
	if last >= 0 && descriptorWords[string(word(last))] {
		return false
	}
	for i := range n {
		if credentialWords[string(word(i))] {
			return true
		}
	}
	for _, p := range credentialPhrases {
		if bytes.Contains(joined, []byte(p)) {
			return true
		}
	}
	return last >= 0 && string(word(last)) == "KEY"
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
	if len(words) == 0 || exemptWords(len(words), func(i int) string { return words[i] }) {
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
