package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/reversi-cloud/reversi/storage"
)

type fakeCred struct{}

func (fakeCred) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "t", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// testKey is a made-up account key (valid base64) that must never show in
// an error.
const testKey = "c2VjcmV0LWtleS10aGF0LW11c3Qtbm90LWxlYWstMDEyMzQ1Njc4OUFCQ0RFRg=="

func cs(parts ...string) string { return strings.Join(parts, ";") }

func TestConfigValidate(t *testing.T) {
	good := cs("DefaultEndpointsProtocol=http", "AccountName=devstoreaccount1", "AccountKey="+testKey,
		"BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1", "QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1",
		"TableEndpoint=http://127.0.0.1:10002/devstoreaccount1")
	if err := (Config{ConnectionString: good}).Validate(); err != nil {
		t.Fatalf("good connection string: %v", err)
	}
	r, _ := Config{ConnectionString: good}.resolve()
	if r.blobURL != "http://127.0.0.1:10000/devstoreaccount1" || r.tURL != "http://127.0.0.1:10002/devstoreaccount1" {
		t.Errorf("endpoints %s %s", r.blobURL, r.tURL)
	}
	r, err := Config{ConnectionString: cs("AccountName=acct", "AccountKey="+testKey, "EndpointSuffix=core.chinacloudapi.cn")}.resolve()
	if err != nil || r.queueURL != "https://acct.queue.core.chinacloudapi.cn" {
		t.Errorf("default endpoints: %v %+v", err, r)
	}
	cred := fakeCred{}
	if err := (Config{Account: "acct1", Credential: cred}).Validate(); err != nil {
		t.Errorf("account and credential: %v", err)
	}
	r, _ = Config{Account: "acct1", Credential: cred}.resolve()
	if r.blobURL != "https://acct1.blob.core.windows.net" || r.tURL != "https://acct1.table.core.windows.net" {
		t.Errorf("account endpoints %s %s", r.blobURL, r.tURL)
	}

	for _, tc := range []struct {
		what string
		cfg  Config
	}{
		{"empty", Config{}},
		{"both", Config{ConnectionString: good, Account: "acct1", Credential: cred}},
		{"account without credential", Config{Account: "acct1"}},
		{"credential without account", Config{Credential: cred}},
		{"bad account name", Config{Account: "Bad_Name", Credential: cred}},
		{"development shorthand", Config{ConnectionString: "UseDevelopmentStorage=true"}},
		{"SAS", Config{ConnectionString: cs("BlobEndpoint=https://a.blob.core.windows.net", "SharedAccessSignature=sv=2020&sig="+testKey)}},
		{"no key", Config{ConnectionString: cs("AccountName=acct")}},
		{"no account", Config{ConnectionString: cs("AccountKey=" + testKey)}},
		{"key not base64", Config{ConnectionString: cs("AccountName=acct", "AccountKey=not*base64*"+testKey)}},
		{"segment without =", Config{ConnectionString: cs("AccountName=acct", testKey)}},
		{"bad protocol", Config{ConnectionString: cs("DefaultEndpointsProtocol=ftp", "AccountName=acct", "AccountKey="+testKey)}},
		{"bad endpoint", Config{ConnectionString: cs("AccountName=acct", "AccountKey="+testKey, "BlobEndpoint=ftp://x")}},
		{"endpoint with query", Config{ConnectionString: cs("AccountName=acct", "AccountKey="+testKey, "BlobEndpoint=https://x/?sig="+testKey)}},
		{"negative attempts", Config{ConnectionString: good, Retry: RetryConfig{MaxAttempts: -1}}},
		{"negative delay", Config{ConnectionString: good, Retry: RetryConfig{BaseDelay: -time.Second}}},
		{"max below base", Config{ConnectionString: good, Retry: RetryConfig{BaseDelay: time.Second, MaxDelay: time.Millisecond}}},
	} {
		err := tc.cfg.Validate()
		if !errors.Is(err, ErrConfig) {
			t.Errorf("%s: got %v, want ErrConfig", tc.what, err)
			continue
		}
		if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "c2VjcmV0") {
			t.Errorf("%s: error holds the key: %v", tc.what, err)
		}
		if _, err := Open(context.Background(), tc.cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: Open: got %v, want ErrConfig", tc.what, err)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	good := cs("AccountName=acct", "AccountKey="+testKey)
	cfg, err := ConfigFromEnv(env(map[string]string{EnvConnectionString: good, EnvAccount: "ignored"}))
	if err != nil || cfg.ConnectionString != good || cfg.Account != "" {
		t.Errorf("connection string: %+v %v", cfg, err)
	}
	cfg, err = ConfigFromEnv(env(map[string]string{EnvAccount: "acct1"}))
	if err != nil || cfg.Account != "acct1" || cfg.Credential == nil || cfg.ConnectionString != "" {
		t.Errorf("account: %+v %v", cfg, err)
	}
	if err == nil {
		if err := cfg.Validate(); err != nil {
			t.Errorf("account config does not validate: %v", err)
		}
	}
	if _, err := ConfigFromEnv(env(nil)); !errors.Is(err, ErrConfig) {
		t.Errorf("nothing set: %v, want ErrConfig", err)
	}
	if _, err := ConfigFromEnv(env(map[string]string{EnvAccount: "Not An Account"})); !errors.Is(err, ErrConfig) {
		t.Errorf("bad account: %v, want ErrConfig", err)
	}
	_, err = ConfigFromEnv(env(map[string]string{EnvConnectionString: cs("AccountName=acct", "AccountKey=%%"+testKey)}))
	if !errors.Is(err, ErrConfig) || strings.Contains(err.Error(), testKey) {
		t.Errorf("bad connection string: %v; want ErrConfig without the key", err)
	}
}

// TestErrorsHideKey sends requests signed with testKey to a server that
// answers with the key in headers and bodies; no error may repeat it.
func TestErrorsHideKey(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-ms-error-code", "AuthenticationFailed")
		w.Header().Set("x-echo", r.Header.Get("Authorization")+" "+testKey)
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`<?xml version="1.0"?><Error><Code>AuthenticationFailed</Code><Message>key ` + testKey + ` auth ` + r.Header.Get("Authorization") + `</Message></Error>`))
	}))
	defer srv.Close()
	conn := cs("DefaultEndpointsProtocol=http", "AccountName=devstoreaccount1", "AccountKey="+testKey,
		"BlobEndpoint="+srv.URL+"/devstoreaccount1", "QueueEndpoint="+srv.URL+"/devstoreaccount1",
		"TableEndpoint="+srv.URL+"/devstoreaccount1")
	b := openBackend(t, Config{ConnectionString: conn, Retry: fastRetry})
	ctx := context.Background()
	var errs []error
	errs = append(errs, b.Container("ccc").Put(ctx, "x", []byte("x")))
	_, err := b.Container("ccc").Get(ctx, "x")
	errs = append(errs, err)
	_, err = b.Queue("qqq").Enqueue(ctx, "x", storage.EnqueueOptions{})
	errs = append(errs, err)
	_, err = b.Table("ttt").Add(ctx, storage.Entity{PartitionKey: "p", RowKey: "r"})
	errs = append(errs, err)
	_, err = b.Table("ttt").Transact(ctx, "p", []storage.Op{{Kind: storage.OpAdd, Entity: storage.Entity{PartitionKey: "p", RowKey: "r"}}})
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Errorf("call %d: no error from a 403", i)
			continue
		}
		if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "SharedKey") {
			t.Errorf("call %d: error holds the key or signature: %v", i, err)
		}
		if !strings.Contains(err.Error(), "not authorized") {
			t.Errorf("call %d: %v does not say it was not authorized", i, err)
		}
	}
}

// TestErrorsAreOurs: no SDK error type gets past the package boundary.
func TestErrorsAreOurs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-ms-error-code", "ResourceNotFound")
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	conn := cs("DefaultEndpointsProtocol=http", "AccountName=devstoreaccount1", "AccountKey="+testKey,
		"BlobEndpoint="+srv.URL+"/devstoreaccount1", "QueueEndpoint="+srv.URL+"/devstoreaccount1",
		"TableEndpoint="+srv.URL+"/devstoreaccount1")
	b := openBackend(t, Config{ConnectionString: conn, Retry: fastRetry})
	ctx := context.Background()
	_, err1 := b.Container("ccc").Get(ctx, "x")
	_, err2 := b.Queue("qqq").Peek(ctx, 1)
	_, err3 := b.Table("ttt").Get(ctx, "p", "r")
	for i, err := range []error{err1, err2, err3} {
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("call %d: %v, want ErrNotFound", i, err)
		}
		var re *azcore.ResponseError
		var se *statusError
		if errors.As(err, &re) || errors.As(err, &se) {
			t.Errorf("call %d: error chain holds a response error: %#v", i, err)
		}
	}
}

func TestConfigsFromEnv(t *testing.T) {
	azurite := func(port int) string {
		ep := func(p int) string { return fmt.Sprintf("http://127.0.0.1:%d/devstoreaccount1", p) }
		return cs("DefaultEndpointsProtocol=http", "AccountName=devstoreaccount1", "AccountKey="+testKey,
			"BlobEndpoint="+ep(port), "QueueEndpoint="+ep(port+1), "TableEndpoint="+ep(port+2))
	}
	a, b, c := azurite(10000), azurite(20000), azurite(30000)
	const (
		cs2, cs3   = EnvConnectionString + "_2", EnvConnectionString + "_3"
		acc2, acc3 = EnvAccount + "_2", EnvAccount + "_3"
	)
	for _, tc := range []struct {
		what string
		env  map[string]string
		want []string // each account's connection string or account name
		err  string   // part of the error; "" for none
	}{
		{"one connection string", map[string]string{EnvConnectionString: a}, []string{a}, ""},
		{"one account", map[string]string{EnvAccount: "acct1"}, []string{"acct1"}, ""},
		{"three connection strings", map[string]string{EnvConnectionString: a, cs2: b, cs3: c}, []string{a, b, c}, ""},
		{"styles mixed across accounts", map[string]string{EnvConnectionString: a, acc2: "acct2", cs3: c}, []string{a, "acct2", c}, ""},
		{"empty values are unset", map[string]string{EnvConnectionString: a, cs2: " ", acc2: ""}, []string{a}, ""},
		{"nothing", nil, nil, "set " + EnvConnectionString},
		{"only a second", map[string]string{cs2: b}, nil, "set " + EnvConnectionString},
		{"gap", map[string]string{EnvConnectionString: a, cs3: c}, nil, cs3 + " is set but account 2 is not"},
		{"gap far away", map[string]string{EnvConnectionString: a, EnvName(EnvAccount, storage.MaxAccounts): "acct9"}, nil, "is set but account 2 is not"},
		{"underscore one", map[string]string{EnvConnectionString: a, EnvConnectionString + "_1": b}, nil, EnvConnectionString + "_1 is not read"},
		{"both styles in one number", map[string]string{EnvConnectionString: a, cs2: b, acc2: "acct2"}, nil, "account 2: set " + cs2 + " or " + acc2 + ", not both"},
		{"both styles in the first", map[string]string{EnvConnectionString: a, EnvAccount: "acct1"}, nil, "account 1: set"},
		{"same connection string twice", map[string]string{EnvConnectionString: a, cs2: b, cs3: a}, nil, "accounts 1 and 3 are the same account"},
		{"same account twice", map[string]string{EnvAccount: "acct1", acc2: "acct1"}, nil, "accounts 1 and 2 are the same account"},
		{"account and its connection string", map[string]string{EnvAccount: "acct", cs2: cs("AccountName=acct", "AccountKey="+testKey)}, nil, "same account"},
		{"bad second connection string", map[string]string{EnvConnectionString: a, cs2: cs("AccountName=acct", "AccountKey=%%"+testKey)}, nil, cs2 + ": "},
		{"bad second account", map[string]string{EnvConnectionString: a, acc2: "Not_An_Account"}, nil, acc2 + ": "},
	} {
		cfgs, err := ConfigsFromEnv(func(k string) string { return tc.env[k] })
		if tc.err != "" {
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want ErrConfig with %q", tc.what, err, tc.err)
			} else if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: error is not one line without the key: %v", tc.what, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.what, err)
			continue
		}
		var got []string
		for _, cfg := range cfgs {
			if err := cfg.Validate(); err != nil {
				t.Errorf("%s: config does not validate: %v", tc.what, err)
			}
			got = append(got, cfg.ConnectionString+cfg.Account)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: accounts %q, want %q", tc.what, got, tc.want)
		}
	}
}

func TestEnvName(t *testing.T) {
	for n, want := range map[int]string{1: EnvAccount, 2: EnvAccount + "_2", 12: EnvAccount + "_12"} {
		if got := EnvName(EnvAccount, n); got != want {
			t.Errorf("EnvName(%d) = %s, want %s", n, got, want)
		}
	}
}

// FuzzConfigsFromEnv: whatever the variables hold, the result is either
// accounts that validate, each named once, or a one-line ErrConfig that
// does not repeat the key.
func FuzzConfigsFromEnv(f *testing.F) {
	good := cs("AccountName=acct", "AccountKey="+testKey)
	f.Add(good, "", "", "", "")
	f.Add(good, "", good, "", "")
	f.Add("", "acct1", "", "acct2", "x")
	f.Add(good, "acct1", "", "", "")
	f.Add(";;=", "Bad", good+";BlobEndpoint=http://h:1/a", "", good)
	f.Fuzz(func(t *testing.T, cs1, acct1, cs2, acct2, cs3 string) {
		env := map[string]string{EnvConnectionString: cs1, EnvAccount: acct1,
			EnvName(EnvConnectionString, 2): cs2, EnvName(EnvAccount, 2): acct2, EnvName(EnvConnectionString, 3): cs3}
		cfgs, err := ConfigsFromEnv(func(k string) string { return env[k] })
		if err != nil {
			if !errors.Is(err, ErrConfig) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), testKey) {
				t.Fatalf("error %q: want one line of ErrConfig without the key", err)
			}
			return
		}
		if len(cfgs) == 0 || len(cfgs) > 3 {
			t.Fatalf("%d accounts", len(cfgs))
		}
		seen := map[string]bool{}
		for _, cfg := range cfgs {
			r, err := cfg.resolve()
			if err != nil || seen[r.blobURL] {
				t.Fatalf("account %+v: %v, named before %v", cfg, err, seen[r.blobURL])
			}
			seen[r.blobURL] = true
		}
	})
}
