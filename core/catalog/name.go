package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"
)

// ReasonUnknownTool (Class Config) is the refusal of a tool asked for by
// a name no tool holds: a host-facing name no Set or offered list holds
// (a made-up name, one from an older turn, one rejected as a name
// collision), or a server's own tool name its catalog lacks. Package
// core/toolcall and package composition refuse with it; this is its one
// definition.
const ReasonUnknownTool = "unknown_tool"

// Host-facing tool names.
const (
	// ToolNamePrefix starts every host-facing tool name.
	ToolNamePrefix = "mcp__"
	// ToolNameSeparator separates the server part from the tool part.
	ToolNameSeparator = "__"
	// MaxToolNameLen is the longest host-facing name model APIs accept.
	MaxToolNameLen = 64
	// toolNameHashLen is the number of hex digits of the hash suffix of a
	// sanitized name (48 bits).
	toolNameHashLen = 12
	// sanitizedServerMax is the part of a sanitized name's budget the
	// server part may keep when the tool part needs the rest.
	sanitizedServerMax = 20
)

// ToolName returns the host-facing name of the server's tool named tool.
// It is a pure function: the same pair always gives the same name, and the
// name always matches ^[a-zA-Z0-9_-]{1,64}$.
//
// A pair is plain when server is non-empty, made only of ASCII letters,
// digits, '_' and '-', contains no "__" and does not end with '_', and tool
// is non-empty and made of the same characters; its name is
//
//	mcp__<server>__<tool>
//
// when that fits in 64 characters. The server part of a plain name never
// contains the separator, so the first "__" after the prefix splits a plain
// name back into its pair and two plain pairs never share a name.
//
// Every other pair is sanitized: each character outside the allowed set
// becomes '_', runs of '_' in the server part collapse to one and a
// trailing one is trimmed, both parts are shortened to fit, and the name
// ends with '_' and 12 lowercase hex digits of SHA-256 over the exact pair
// (length-prefixed, so ("a","bc") and ("ab","c") differ):
//
//	mcp__<server'>__<tool'>_<hash>
//
// Two distinct pairs get the same sanitized name only if 48 bits of
// SHA-256 collide; a plain name equals a sanitized one only if a server
// names a tool after another pair's hash. Catalogs and Sets detect any
// such collision and reject the tools involved (reason "name_collision").
func ToolName(server, tool string) string {
	if plainServer(server) && plainPart(tool) {
		if n := len(ToolNamePrefix) + len(server) + len(ToolNameSeparator) + len(tool); n <= MaxToolNameLen {
			return ToolNamePrefix + server + ToolNameSeparator + tool
		}
	}
	return sanitizedName(server, tool)
}

// plainPart reports whether s is non-empty and made only of [a-zA-Z0-9_-].
func plainPart(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !nameByte(s[i]) {
			return false
		}
	}
	return true
}

// plainServer reports whether s can be the server part of a plain name.
func plainServer(s string) bool {
	return plainPart(s) && !strings.Contains(s, ToolNameSeparator) && s[len(s)-1] != '_'
}

func nameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// sanitize maps every character of s outside [a-zA-Z0-9_-] (a whole rune,
// or one byte of invalid UTF-8) to '_', collapsing runs of '_' when
// collapse is set, and keeps at most max bytes.
func sanitize(s string, collapse bool, max int) string {
	b := make([]byte, 0, min(len(s), max))
	for _, r := range s {
		if len(b) == max {
			break
		}
		c := byte('_')
		if r < 0x80 && nameByte(byte(r)) {
			c = byte(r)
		}
		if collapse && c == '_' && len(b) > 0 && b[len(b)-1] == '_' {
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

func sanitizedName(server, tool string) string {
	// Budget for both parts: the whole name minus the fixed characters.
	const budget = MaxToolNameLen - len(ToolNamePrefix) - len(ToolNameSeparator) - 1 - toolNameHashLen
	s := strings.TrimRight(sanitize(server, true, budget), "_")
	t := sanitize(tool, false, budget)
	if len(s)+len(t) > budget {
		// Give the tool part what the server part need not keep, but
		// keep at least sanitizedServerMax characters of the server.
		s = s[:min(len(s), max(budget-len(t), sanitizedServerMax))]
		s = strings.TrimRight(s, "_")
		t = t[:min(len(t), budget-len(s))]
	}
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	h.Write(n[:binary.PutUvarint(n[:], uint64(len(server)))])
	h.Write([]byte(server))
	h.Write([]byte(tool))
	var sum [sha256.Size]byte
	var hx [toolNameHashLen]byte
	hex.Encode(hx[:], h.Sum(sum[:0])[:toolNameHashLen/2])
	return ToolNamePrefix + s + ToolNameSeparator + t + "_" + string(hx[:])
}

// IsToolNameOf reports whether hostName can be a host-facing name of a
// tool of server: whether ToolName(server, tool) == hostName for some tool
// name. It is true for every name ToolName gives server (a property the
// tests check over generated pairs), so a host can tell which server a
// host-facing name belongs to without the server's catalog (a server that
// is not connected, say). A plain name belongs to one server only; a
// sanitized one, whose server part may be cut to its first 20
// characters, may belong to several servers that share that much of
// their sanitized names: a caller that needs one owner checks that only
// one server claims the name.
func IsToolNameOf(hostName, server string) bool {
	rest, ok := strings.CutPrefix(hostName, ToolNamePrefix)
	if !ok || len(hostName) > MaxToolNameLen {
		return false
	}
	if plainServer(server) {
		if tool, ok := strings.CutPrefix(rest, server+ToolNameSeparator); ok && plainPart(tool) {
			return true
		}
	}
	// A sanitized name: <server'>__<tool'>_<hash>, server' holding no
	// "__" (runs of '_' collapsed) and no trailing '_'.
	i := strings.Index(rest, ToolNameSeparator)
	if i < 0 || !hasHashSuffix(rest[i+len(ToolNameSeparator):]) {
		return false
	}
	part := rest[:i]
	const budget = MaxToolNameLen - len(ToolNamePrefix) - len(ToolNameSeparator) - 1 - toolNameHashLen
	full := strings.TrimRight(sanitize(server, true, budget), "_")
	if part == full {
		return true
	}
	for k := min(len(full), sanitizedServerMax); k < len(full); k++ {
		if strings.TrimRight(full[:k], "_") == part {
			return true
		}
	}
	return false
}

// hasHashSuffix reports whether s ends with the '_' and hex hash of a sanitized
// name.
func hasHashSuffix(s string) bool {
	if len(s) < toolNameHashLen+1 || s[len(s)-toolNameHashLen-1] != '_' {
		return false
	}
	for i := len(s) - toolNameHashLen; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
