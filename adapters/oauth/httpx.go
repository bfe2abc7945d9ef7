package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"

	"github.com/mcpward/mcpward/core/refusal"
)

// response is one bounded response: any status but 3xx, 429 and 5xx, which
// are refused before a response is returned.
type response struct {
	status int
	header http.Header
	body   []byte
}

// errRedirect is returned by the CheckRedirect this package installs.
var errRedirect = errors.New("oauth: redirect refused")

// get sends a GET for u (an https URL) with Accept: application/json.
func (c *Client) get(ctx context.Context, server string, u *url.URL) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, refuse(refusal.Config, ReasonURLInvalid, server, "")
	}
	return c.do(ctx, server, req)
}

// postForm POSTs form to u (an https URL) as
// application/x-www-form-urlencoded, with no client authentication.
func (c *Client) postForm(ctx context.Context, server string, u *url.URL, form url.Values) (*response, error) {
	return c.postFormAuth(ctx, server, u, form, clientAuth{method: AuthNone}, "")
}

// postJSON POSTs v, encoded as JSON, to u (an https URL).
func (c *Client) postJSON(ctx context.Context, server string, u *url.URL, v any) (*response, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, refuse(refusal.Internal, "encode_failed", server, "")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, refuse(refusal.Config, ReasonURLInvalid, server, "")
	}
	req.Header.Set("Content-Type", "application/json")
	return c.do(ctx, server, req)
}

// do sends req through the origin's client with redirects refused and reads
// at most c.maxBody bytes of the answer, all of it within
// Options.RequestTimeout.
//
// Errors (each naming server and the request's origin, nothing else):
// Config ReasonURLInvalid for a URL that is not https; the ClientFunc's
// refusal (its Server filled in) or Transient ReasonUnavailable when it
// fails otherwise; Transient "canceled"/"deadline_exceeded" when ctx ended;
// Refused ReasonRedirectRefused for any 3xx; Transient ReasonUnavailable for
// a network failure, 429 or 5xx; Protocol ReasonMetadataInvalid for a body
// over the bound. A refusal the client's dialer returned (egress) is passed
// on with server filled in.
func (c *Client) do(ctx context.Context, server string, req *http.Request) (*response, error) {
	_, origin, err := c.urls.canonical(req.URL.String(), server)
	if err != nil {
		return nil, err
	}
	hc, err := c.client(ctx, req.URL)
	if err != nil || hc == nil {
		if re := refusalOf(err); re != nil {
			return nil, stampServer(re, server)
		}
		return nil, refuse(refusal.Transient, ReasonUnavailable, server, origin)
	}
	cl := *hc
	cl.CheckRedirect = func(*http.Request, []*http.Request) error { return errRedirect }
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req = req.WithContext(ctx)
	req.Header.Set("Accept", "application/json")
	resp, err := cl.Do(req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctxRefusal(ctx.Err(), server, origin)
		case errors.Is(err, errRedirect):
			return nil, refuse(refusal.Refused, ReasonRedirectRefused, server, origin)
		}
		if re := refusalOf(err); re != nil {
			return nil, stampServer(re, server)
		}
		return nil, refuse(refusal.Transient, ReasonUnavailable, server, origin)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return nil, refuse(refusal.Refused, ReasonRedirectRefused, server, origin)
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return nil, refuse(refusal.Transient, ReasonUnavailable, server, origin)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctxRefusal(ctx.Err(), server, origin)
		}
		return nil, refuse(refusal.Transient, ReasonUnavailable, server, origin)
	}
	if int64(len(body)) > c.maxBody {
		return nil, refuse(refusal.Protocol, ReasonMetadataInvalid, server, origin)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// decodeObject decodes r's body, which must be one JSON object, into dst;
// anything else is Class Protocol, Reason ReasonMetadataInvalid.
func decodeObject(r *response, dst any, server, origin string) error {
	b := bytes.TrimSpace(r.body)
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, dst) != nil {
		return refuse(refusal.Protocol, ReasonMetadataInvalid, server, origin)
	}
	return nil
}

// refusalOf returns the *refusal.Error in err's chain, if any.
func refusalOf(err error) *refusal.Error {
	var re *refusal.Error
	if errors.As(err, &re) {
		return re
	}
	return nil
}

// stampServer returns a copy of re naming server when it names none.
func stampServer(re *refusal.Error, server string) *refusal.Error {
	cp := *re
	if cp.Server == "" {
		cp.Server = server
	}
	return &cp
}
