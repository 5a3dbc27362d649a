package azure

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/reversi-cloud/reversi/storage"
)

// Environment variables read by ConfigFromEnv.
const (
	EnvConnectionString = "AZURE_STORAGE_CONNECTION_STRING"
	EnvAccount          = "AZURE_STORAGE_ACCOUNT"
)

// Config says how to reach a storage account. Set either ConnectionString,
// or Account and Credential (Microsoft Entra ID, for example
// azidentity.DefaultAzureCredential); not both.
type Config struct {
	// ConnectionString is an account-key connection string, for example
	// Azurite's "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;
	// AccountKey=...;BlobEndpoint=...;QueueEndpoint=...;TableEndpoint=...".
	// The shorthand UseDevelopmentStorage=true is not accepted: name the
	// endpoints, since the emulator runs on ports of its own choosing.
	ConnectionString string
	// Account is the storage account name; the endpoints are
	// https://<account>.{blob,queue,table}.core.windows.net.
	Account    string
	Credential azcore.TokenCredential
	Retry      RetryConfig
}

// RetryConfig bounds the retries of transient failures (408, 429, 500,
// 502, 503, 504, timeouts, refused or reset connections). Zero fields take
// the defaults shown.
type RetryConfig struct {
	// MaxAttempts is the number of tries per request, the first included
	// (default 8; 1 disables retries).
	MaxAttempts int
	// BaseDelay is the backoff before the second try; it doubles per try
	// (default 250ms). Each sleep is drawn uniformly from [0, backoff)
	// ("full jitter").
	BaseDelay time.Duration
	// MaxDelay caps one backoff (default 10s).
	MaxDelay time.Duration
	// TryTimeout is how long one try waits for the response headers
	// (default 60s). It does not limit reading a streamed body.
	TryTimeout time.Duration
}

// Retry defaults.
const (
	DefaultMaxAttempts = 8
	DefaultBaseDelay   = 250 * time.Millisecond
	DefaultMaxDelay    = 10 * time.Second
	DefaultTryTimeout  = 60 * time.Second
)

func (r RetryConfig) withDefaults() RetryConfig {
	if r.MaxAttempts == 0 {
		r.MaxAttempts = DefaultMaxAttempts
	}
	if r.BaseDelay == 0 {
		r.BaseDelay = DefaultBaseDelay
	}
	if r.MaxDelay == 0 {
		r.MaxDelay = DefaultMaxDelay
	}
	if r.TryTimeout == 0 {
		r.TryTimeout = DefaultTryTimeout
	}
	return r
}

func (r RetryConfig) validate() error {
	switch {
	case r.MaxAttempts < 0 || r.MaxAttempts > 100:
		return fmt.Errorf("azure: config: Retry.MaxAttempts %d out of range 0..100", r.MaxAttempts)
	case r.BaseDelay < 0:
		return fmt.Errorf("azure: config: Retry.BaseDelay %v is negative", r.BaseDelay)
	case r.MaxDelay < 0:
		return fmt.Errorf("azure: config: Retry.MaxDelay %v is negative", r.MaxDelay)
	case r.TryTimeout < 0:
		return fmt.Errorf("azure: config: Retry.TryTimeout %v is negative", r.TryTimeout)
	}
	d := r.withDefaults()
	if d.MaxDelay < d.BaseDelay {
		return fmt.Errorf("azure: config: Retry.MaxDelay %v is below BaseDelay %v", d.MaxDelay, d.BaseDelay)
	}
	return nil
}

// ErrConfig is wrapped by every configuration error from Validate, Open
// and ConfigFromEnv. Its messages never hold the connection string or the
// account key.
var ErrConfig = errors.New("azure: bad configuration")

// Validate checks the configuration without any network traffic.
func (c Config) Validate() error {
	_, err := c.resolve()
	return err
}

// ConfigFromEnv builds a Config from AZURE_STORAGE_CONNECTION_STRING, or
// else from AZURE_STORAGE_ACCOUNT with azidentity.DefaultAzureCredential
// (which reads its own AZURE_* variables and managed identity). getenv is
// os.Getenv in a command and a map lookup in tests.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cs, acct := strings.TrimSpace(getenv(EnvConnectionString)), strings.TrimSpace(getenv(EnvAccount))
	if cs == "" && acct == "" {
		return Config{}, fmt.Errorf("%w: set %s or %s", ErrConfig, EnvConnectionString, EnvAccount)
	}
	if cs != "" {
		acct = ""
	}
	return configFromValues(cs, acct, 1)
}

// configFromValues builds the Config of account n (counted from 1) from
// the values of its connection string and account variables, exactly one
// of them set.
func configFromValues(cs, acct string, n int) (Config, error) {
	if cs != "" {
		cfg := Config{ConnectionString: cs}
		if err := cfg.Validate(); err != nil {
			return Config{}, fmt.Errorf("%s: %w", EnvName(EnvConnectionString, n), err)
		}
		return cfg, nil
	}
	name := EnvName(EnvAccount, n)
	if err := validAccountName(acct); err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		// azidentity's message names missing settings, never secrets.
		return Config{}, fmt.Errorf("%w: %s: default Azure credential: %v", ErrConfig, name, err)
	}
	return Config{Account: acct, Credential: cred}, nil
}

// EnvName is the name of variable base (EnvConnectionString or
// EnvAccount) for account n, counted from 1: base itself for the first,
// base_2, base_3 and so on for the others.
func EnvName(base string, n int) string {
	if n == 1 {
		return base
	}
	return base + "_" + strconv.Itoa(n)
}

// ConfigsFromEnv builds one Config per storage account: the first from
// AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT, as
// ConfigFromEnv does, then account n from AZURE_STORAGE_CONNECTION_STRING_n
// or AZURE_STORAGE_ACCOUNT_n, for n = 2, 3 and so on while either is set,
// up to storage.MaxAccounts.
// Each account may use either style, but not both; the numbers must be
// contiguous (no gap, no _1), and no account may be named twice (the same
// blob endpoint, or the same account name). The accounts of the same
// emulator on different ports are different accounts.
func ConfigsFromEnv(getenv func(string) string) ([]Config, error) {
	value := func(base string, n int) string { return strings.TrimSpace(getenv(EnvName(base, n))) }
	for _, base := range []string{EnvConnectionString, EnvAccount} {
		if strings.TrimSpace(getenv(base+"_1")) != "" {
			return nil, fmt.Errorf("%w: %s_1 is not read: the first account is %s", ErrConfig, base, base)
		}
	}
	var cfgs []Config
	seen := map[string]int{} // blob endpoint -> account number
	for n := 1; n <= storage.MaxAccounts; n++ {
		cs, acct := value(EnvConnectionString, n), value(EnvAccount, n)
		if cs == "" && acct == "" {
			if n == 1 {
				return nil, fmt.Errorf("%w: set %s or %s", ErrConfig, EnvConnectionString, EnvAccount)
			}
			if err := noneAfter(value, n); err != nil {
				return nil, err
			}
			break
		}
		if cs != "" && acct != "" {
			return nil, fmt.Errorf("%w: account %d: set %s or %s, not both", ErrConfig, n, EnvName(EnvConnectionString, n), EnvName(EnvAccount, n))
		}
		cfg, err := configFromValues(cs, acct, n)
		if err != nil {
			return nil, err
		}
		r, _ := cfg.resolve() // configFromValues validated it
		if m, ok := seen[r.blobURL]; ok {
			return nil, fmt.Errorf("%w: accounts %d and %d are the same account (%s)", ErrConfig, m, n, r.blobURL)
		}
		seen[r.blobURL] = n
		cfgs = append(cfgs, cfg)
	}
	return cfgs, nil
}

// noneAfter refuses a numbered variable beyond the gap at account n.
func noneAfter(value func(base string, n int) string, n int) error {
	for m := n + 1; m <= storage.MaxAccounts; m++ {
		for _, base := range []string{EnvConnectionString, EnvAccount} {
			if value(base, m) != "" {
				return fmt.Errorf("%w: %s is set but account %d is not: number the accounts without gaps", ErrConfig, EnvName(base, m), n)
			}
		}
	}
	return nil
}

// resolved is a validated Config: endpoints without a trailing slash, and
// either an account key or a token credential.
type resolved struct {
	account                 string
	key                     []byte // decoded account key; nil with a token credential
	keyText                 string // the key as given, kept only to redact it from messages
	cred                    azcore.TokenCredential
	blobURL, queueURL, tURL string
	retry                   RetryConfig
}

func (c Config) resolve() (*resolved, error) {
	if err := c.Retry.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	r := &resolved{retry: c.Retry.withDefaults()}
	switch {
	case c.ConnectionString != "" && (c.Account != "" || c.Credential != nil):
		return nil, fmt.Errorf("%w: set either ConnectionString or Account and Credential, not both", ErrConfig)
	case c.ConnectionString != "":
		if err := r.parseConnectionString(c.ConnectionString); err != nil {
			return nil, err
		}
	case c.Account != "":
		if err := validAccountName(c.Account); err != nil {
			return nil, err
		}
		if c.Credential == nil {
			return nil, fmt.Errorf("%w: Account %q needs a Credential", ErrConfig, c.Account)
		}
		r.account = c.Account
		r.cred = c.Credential
		r.blobURL = "https://" + c.Account + ".blob.core.windows.net"
		r.queueURL = "https://" + c.Account + ".queue.core.windows.net"
		r.tURL = "https://" + c.Account + ".table.core.windows.net"
	case c.Credential != nil:
		return nil, fmt.Errorf("%w: Credential needs an Account", ErrConfig)
	default:
		return nil, fmt.Errorf("%w: neither ConnectionString nor Account is set", ErrConfig)
	}
	return r, nil
}

func validAccountName(a string) error {
	if len(a) < 3 || len(a) > 24 {
		return fmt.Errorf("%w: account name must be 3 to 24 lowercase letters and digits", ErrConfig)
	}
	for i := 0; i < len(a); i++ {
		if c := a[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return fmt.Errorf("%w: account name must be 3 to 24 lowercase letters and digits", ErrConfig)
		}
	}
	return nil
}

// parseConnectionString reads the account-key form. Its errors name keys
// of the string, never values other than the account name and endpoints.
func (r *resolved) parseConnectionString(cs string) error {
	kv := map[string]string{}
	for _, part := range strings.Split(cs, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return fmt.Errorf("%w: connection string: a segment is not key=value", ErrConfig)
		}
		kv[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if strings.EqualFold(kv["usedevelopmentstorage"], "true") {
		return fmt.Errorf("%w: connection string: UseDevelopmentStorage=true is not supported; give AccountName, AccountKey and BlobEndpoint, QueueEndpoint and TableEndpoint", ErrConfig)
	}
	if _, ok := kv["sharedaccesssignature"]; ok {
		return fmt.Errorf("%w: connection string: SharedAccessSignature is not supported; use an account key or Account with a Credential", ErrConfig)
	}
	r.account = kv["accountname"]
	if r.account == "" {
		return fmt.Errorf("%w: connection string: AccountName is missing", ErrConfig)
	}
	keyText := kv["accountkey"]
	if keyText == "" {
		return fmt.Errorf("%w: connection string: AccountKey is missing", ErrConfig)
	}
	r.keyText = keyText
	key, err := base64.StdEncoding.DecodeString(keyText)
	if err != nil || len(key) == 0 {
		return fmt.Errorf("%w: connection string: AccountKey is not valid base64", ErrConfig)
	}
	r.key = key
	proto := strings.ToLower(kv["defaultendpointsprotocol"])
	if proto == "" {
		proto = "https"
	}
	if proto != "https" && proto != "http" {
		return fmt.Errorf("%w: connection string: DefaultEndpointsProtocol must be http or https", ErrConfig)
	}
	suffix := kv["endpointsuffix"]
	if suffix == "" {
		suffix = "core.windows.net"
	}
	endpoint := func(name, service string) (string, error) {
		u := kv[name]
		if u == "" {
			return proto + "://" + r.account + "." + service + "." + suffix, nil
		}
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.RawQuery != "" || p.User != nil {
			return "", fmt.Errorf("%w: connection string: %s is not an http(s) URL without query", ErrConfig, name)
		}
		return strings.TrimRight(u, "/"), nil
	}
	if r.blobURL, err = endpoint("blobendpoint", "blob"); err != nil {
		return err
	}
	if r.queueURL, err = endpoint("queueendpoint", "queue"); err != nil {
		return err
	}
	if r.tURL, err = endpoint("tableendpoint", "table"); err != nil {
		return err
	}
	return nil
}

// redact removes the account key, in any of the spellings a URL or a
// header dump could hold, from s. Every message this package builds from
// foreign text passes through it.
func (r *resolved) redact(s string) string {
	if r == nil || r.keyText == "" {
		return s
	}
	for _, k := range []string{r.keyText, url.QueryEscape(r.keyText), url.PathEscape(r.keyText),
		strings.TrimRight(r.keyText, "=")} {
		if k != "" {
			s = strings.ReplaceAll(s, k, "[REDACTED]")
		}
	}
	return s
}
