package azure

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
)

// The tables SDK refuses an empty PartitionKey wherever the key goes into
// a URL (get, update, upsert, delete), although Azure allows it and so
// does storage.Table. Such calls give the SDK a stand-in key, a NUL that
// storage.ValidKey forbids so that no real key can be mistaken for it,
// and emptyKeyPolicy puts the empty key back into the request: into the
// URL, the JSON entity, and the sub-requests of a batch.
const emptyKeyStandIn = "\x00"

var emptyKeyReplacer = strings.NewReplacer(
	"PartitionKey='%00'", "PartitionKey=''", // url.PathEscape of the stand-in
	`"PartitionKey":"\u0000"`, `"PartitionKey":""`, // its JSON
)

type emptyKeyCtx struct{}

// sdkKey is the partition key to give the SDK for pk, and ctx marked for
// emptyKeyPolicy if that is the stand-in.
func sdkKey(ctx context.Context, pk string) (context.Context, string) {
	if pk != "" {
		return ctx, pk
	}
	return context.WithValue(ctx, emptyKeyCtx{}, true), emptyKeyStandIn
}

// standIn is pk, or the stand-in if pk is empty.
func standIn(pk string) string {
	if pk == "" {
		return emptyKeyStandIn
	}
	return pk
}

// emptyKeyPolicy replaces the stand-in of an empty PartitionKey in the
// requests of calls sdkKey marked.
type emptyKeyPolicy struct{}

func (emptyKeyPolicy) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	if raw.Context().Value(emptyKeyCtx{}) == nil {
		return req.Next()
	}
	if p := raw.URL.EscapedPath(); strings.Contains(p, "%00") {
		fixed := emptyKeyReplacer.Replace(p)
		unescaped, err := url.PathUnescape(fixed)
		if err != nil {
			return nil, err
		}
		raw.URL.Path, raw.URL.RawPath = unescaped, fixed
	}
	if body := req.Body(); body != nil {
		data, err := io.ReadAll(body)
		if err != nil {
			return nil, err
		}
		fixed := []byte(emptyKeyReplacer.Replace(string(data)))
		if err := req.SetBody(streaming.NopCloser(bytes.NewReader(fixed)), raw.Header.Get("Content-Type")); err != nil {
			return nil, err
		}
	}
	return req.Next()
}
