package view

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
)

// WriteDiscovery writes an OAuth discovery report for people: the
// resource, the issuer, the scopes a sign-in would request, then one line
// per step (what was checked, the projected URL, the HTTP status, the
// outcome and its reason) with its hint under it, and what to do when
// discovery failed. Every value is made safe for a terminal; the report
// holds no secret (URLs are projected: no query, no userinfo).
func WriteDiscovery(w io.Writer, name string, rep *oauth.Report) {
	if rep == nil {
		return
	}
	fmt.Fprintf(w, "OAuth discovery of %s:\n", termsafe.Line(name))
	if rep.Resource != "" {
		fmt.Fprintf(w, "  resource  %s\n", termsafe.Line(rep.Resource))
	}
	if rep.Issuer != "" {
		fmt.Fprintf(w, "  issuer    %s\n", termsafe.Line(rep.Issuer))
	}
	if len(rep.Scopes) > 0 {
		fmt.Fprintf(w, "  scopes    %s\n", termsafe.Line(strings.Join(rep.Scopes, " ")))
	}
	for i, st := range rep.Steps {
		line := fmt.Sprintf("%2d. %-20s", i+1, st.Check)
		if st.URL != "" {
			line += " " + st.URL
		}
		if st.Status != 0 {
			line += " (" + strconv.Itoa(st.Status) + ")"
		}
		line += ": " + string(st.Outcome)
		if st.Reason != "" {
			line += " " + st.Reason
		}
		fmt.Fprintf(w, "  %s\n", termsafe.Line(line))
		if st.Hint != "" {
			fmt.Fprintf(w, "      %s\n", termsafe.Line(st.Hint))
		}
	}
	if rep.Reason != "" {
		fmt.Fprintf(w, "  discovery failed (%s): %s\n", termsafe.Line(rep.Reason), termsafe.Line(DiscoveryFix(rep.Reason)))
	} else if len(rep.Steps) > 0 {
		fmt.Fprintf(w, "  discovery ok: \"mcpward login %s\" signs in\n", termsafe.Line(name))
	}
}

// DiscoveryFix is what to do about a discovery that ended with reason.
func DiscoveryFix(reason string) string {
	switch reason {
	case oauth.ReasonResourceMetadataUnavailable:
		return "the server publishes no protected-resource metadata (RFC 9728), and mcpward never guesses an authorization server; ask its operator, or name the authorization server's metadata URL in the definition's \"oauth\": {\"authServerMetadataUrl\": ...}"
	case oauth.ReasonResourceMismatch:
		return "the metadata describes another resource than this URL: check the definition's URL (path and trailing slash) against the server's documentation"
	case oauth.ReasonAuthorizationServerMissing:
		return "the metadata names no authorization server; ask the server's operator, or name its metadata URL in \"oauth\": {\"authServerMetadataUrl\": ...}"
	case oauth.ReasonInsecureEndpoint:
		return "an endpoint is not https; mcpward signs in over https only"
	case oauth.ReasonPKCEUnsupported:
		return "the authorization server does not offer PKCE S256, which MCP requires; it cannot be signed in to safely"
	case oauth.ReasonIssuerMismatch:
		return "the authorization server's metadata names another issuer than the one it was found for; ask its operator"
	}
	return "read the steps above; each failed one names what did not line up"
}
