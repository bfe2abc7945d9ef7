package mcpserve

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure Server.HTTPHandler.
type HTTPOptions struct {
	// Token is the bearer token every request must carry
	// ("Authorization: Bearer TOKEN"); a request without it, or with
	// another, is answered 401. "" turns the check off: for tests only,
	// and the caller must make sure the listener is loopback.
	Token string
	// Port is the port the listener is bound to: the Host header must
	// name a loopback host (127.0.0.1, [::1], localhost) with this port,
	// and an Origin header, when present, the same, else 403 (DNS
	// rebinding). 0 accepts any port.
	Port string
}

// HTTPHandler returns the Streamable HTTP handler of s: every session is
// served by s. It sends no CORS header, answers OPTIONS 405, checks Host
// and Origin (403) before the bearer token (401), and only then hands the
// request to the SDK.
func (s *Server) HTTPHandler(o HTTPOptions) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, &mcp.StreamableHTTPOptions{Logger: s.log})
	token := []byte(o.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if !loopbackHost(r.Host, o.Port) {
			http.Error(w, "forbidden host", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !loopbackHost(u.Host, o.Port) {
				http.Error(w, "forbidden origin", http.StatusForbidden)
				return
			}
		}
		if len(token) > 0 {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), token) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="mcpward"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether hostport names a loopback host, with port
// when port is not "".
func loopbackHost(hostport, port string) bool {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if port != "" && p != port {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
