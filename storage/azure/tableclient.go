package azure

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
)

// tableAPIVersion is the Table service version this client speaks; it is
// the one the Go tables SDK uses, and the oldest that accepts Entra ID
// tokens.
const tableAPIVersion = "2019-02-02"

// tableClient sends Table service requests through an azcore pipeline
// (authentication, telemetry; no retries: see retry.go).
type tableClient struct {
	endpoint string // no trailing slash
	pl       runtime.Pipeline
}

// request describes one Table service call.
type request struct {
	method      string
	url         string
	header      map[string]string
	body        []byte
	contentType string
}

// send runs one try of r and returns the response with its body read, or
// a *statusError for a response outside 2xx.
func (tc *tableClient) send(ctx context.Context, r request) (*http.Response, []byte, error) {
	req, err := runtime.NewRequest(ctx, r.method, r.url)
	if err != nil {
		return nil, nil, err
	}
	h := req.Raw().Header
	h.Set("x-ms-version", tableAPIVersion)
	h.Set("DataServiceVersion", "3.0")
	h.Set("MaxDataServiceVersion", "3.0;NetFx")
	h.Set("Accept", "application/json;odata=minimalmetadata")
	for k, v := range r.header {
		h.Set(k, v)
	}
	if r.body != nil {
		if err := req.SetBody(streaming.NopCloser(bytes.NewReader(r.body)), r.contentType); err != nil {
			return nil, nil, err
		}
	}
	resp, err := tc.pl.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, nil, parseTableError(resp.StatusCode, resp.Header, data)
	}
	return resp, data, nil
}

// parseTableError reads the service's error code from the x-ms-error-code
// header or an OData JSON or XML error body.
func parseTableError(status int, header http.Header, body []byte) *statusError {
	e := &statusError{status: status, header: header}
	if header != nil {
		e.code = header.Get("x-ms-error-code")
	}
	var j struct {
		OData *struct {
			Code    string `json:"code"`
			Message struct {
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
		Error *struct { // the form of newer service versions
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &j) == nil {
		switch {
		case j.OData != nil:
			e.message = j.OData.Message.Value
			if e.code == "" {
				e.code = j.OData.Code
			}
		case j.Error != nil:
			e.message = j.Error.Message
			if e.code == "" {
				e.code = j.Error.Code
			}
		}
		return e
	}
	var x struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	if xml.Unmarshal(body, &x) == nil {
		e.message = x.Message
		if e.code == "" {
			e.code = x.Code
		}
	}
	return e
}

// sharedKeyLitePolicy signs Table requests with the account key
// (SharedKeyLite: the date and the canonical resource).
type sharedKeyLitePolicy struct {
	account string
	key     []byte
}

func (p *sharedKeyLitePolicy) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	date := time.Now().UTC().Format(http.TimeFormat)
	raw.Header.Set("x-ms-date", date)
	resource := "/" + p.account + raw.URL.EscapedPath()
	if raw.URL.Path == "" {
		resource += "/"
	}
	if comp := raw.URL.Query().Get("comp"); comp != "" {
		resource += "?comp=" + comp
	}
	mac := hmac.New(sha256.New, p.key)
	mac.Write([]byte(date + "\n" + resource))
	raw.Header.Set("Authorization", "SharedKeyLite "+p.account+":"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	return req.Next()
}

// escapeKey percent-encodes a key for a path segment, leaving only
// unreserved characters as they are, after doubling single quotes for the
// OData string literal it sits in.
func escapeKey(k string) string {
	k = strings.ReplaceAll(k, "'", "''")
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func (tc *tableClient) entityURL(table, pk, rk string) string {
	return tc.endpoint + "/" + table + "(PartitionKey='" + escapeKey(pk) + "',RowKey='" + escapeKey(rk) + "')"
}

// odataString quotes s as an OData string literal.
func odataString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// encodeQuery is url.Values.Encode with spaces as %20, which every
// service version reads as a space.
func encodeQuery(v url.Values) string { return strings.ReplaceAll(v.Encode(), "+", "%20") }
