package browse

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// chrome drives a headless Chromium through the DevTools protocol over
// --remote-debugging-pipe: JSON messages ending in a NUL byte, written
// to the browser's descriptor 3 and read from its descriptor 4. Events
// are ignored; every call waits for its own answer.
type chrome struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      *os.File // to the browser
	out     *bufio.Reader
	session string // the page's flattened session
	next    int
	mu      sync.Mutex
}

// chromiumPath finds the browser; without it the test skips, unless
// REVERSI_REQUIRE_BROWSER is set (scripts/test.sh sets it after
// installing Chromium), when it fails.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("REVERSI_REQUIRE_BROWSER") != "" {
		t.Fatal("REVERSI_REQUIRE_BROWSER is set but no chromium is on PATH (scripts/test.sh installs it with apt-get)")
	}
	t.Skip("chromium is not installed: apt-get install chromium, or run scripts/test.sh, which installs it")
	return ""
}

// startChrome starts a headless browser with one blank page, stopped
// when the test ends. A browser whose first command fails is started
// again, up to three times in all: the failure seen is a crash at
// launch, which this VM's Chromium has now and then, with nothing of
// ours loaded yet. A failure of any later command fails the test.
func startChrome(t *testing.T) *chrome {
	t.Helper()
	path := chromiumPath(t)
	const launches = 3
	for i := 1; ; i++ {
		c, stderr := launchChrome(t, path)
		var target struct{ TargetID string }
		err := c.send("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
		if err != nil && i < launches {
			t.Logf("chromium died at launch %d of %d (%v); its standard error:\n%s", i, launches, err, stderr.String())
			continue // its cleanup stops it
		}
		if err != nil {
			t.Fatal(err)
		}
		var attached struct{ SessionID string }
		c.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
		c.session = attached.SessionID
		return c
	}
}

// launchChrome starts the browser at path, to be stopped when the test
// ends, and returns it with what it writes to standard error.
func launchChrome(t *testing.T, path string) (*chrome, *strings.Builder) {
	t.Helper()
	toBrowser, in, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out, fromBrowser, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--remote-debugging-pipe", "--user-data-dir="+t.TempDir(), "--no-first-run", "--no-default-browser-check",
		"--disable-extensions", "--disable-background-networking", "--disable-sync", "--window-size=1200,900", "about:blank")
	cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser} // descriptors 3 and 4
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toBrowser.Close()
	fromBrowser.Close()
	t.Cleanup(func() {
		in.Close() // the browser exits when its pipe closes
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		out.Close()
		if t.Failed() {
			t.Logf("chromium's standard error:\n%s", stderr.String())
		}
	})
	return &chrome{t: t, cmd: cmd, in: in, out: bufio.NewReader(out)}, stderr
}

// call sends one command (to the page when session is set) and decodes
// its result into result, failing the test on any error.
func (c *chrome) call(session, method string, params any, result any) {
	c.t.Helper()
	if err := c.send(session, method, params, result); err != nil {
		c.t.Fatal(err)
	}
}

// send is call, returning the error.
func (c *chrome) send(session, method string, params any, result any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	msg := map[string]any{"id": c.next, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := c.in.Write(append(b, 0)); err != nil {
		return fmt.Errorf("%s: writing to chromium: %w", method, err)
	}
	for {
		raw, err := c.out.ReadBytes(0)
		if err != nil {
			return fmt.Errorf("%s: reading from chromium: %w", method, err)
		}
		var ans struct {
			ID     int
			Result json.RawMessage
			Error  *struct{ Message string }
		}
		if err := json.Unmarshal(raw[:len(raw)-1], &ans); err != nil {
			return fmt.Errorf("%s: %w in %q", method, err, raw)
		}
		if ans.ID != c.next {
			continue // an event
		}
		if ans.Error != nil {
			return fmt.Errorf("%s: %s", method, ans.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(ans.Result, result); err != nil {
				return fmt.Errorf("%s: %w in %s", method, err, ans.Result)
			}
		}
		return nil
	}
}

// navigate loads url in the page.
func (c *chrome) navigate(url string) {
	c.t.Helper()
	c.call(c.session, "Page.navigate", map[string]any{"url": url}, nil)
}

// eval evaluates a JavaScript expression in the page, awaiting a
// promise, and decodes its value into out.
func (c *chrome) eval(expr string, out any) {
	c.t.Helper()
	var res struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails *struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	c.call(c.session, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &res)
	if e := res.ExceptionDetails; e != nil {
		c.t.Fatalf("evaluating %s: %s %s", expr, e.Text, e.Exception.Description)
	}
	if out != nil {
		if err := json.Unmarshal(res.Result.Value, out); err != nil {
			c.t.Fatalf("evaluating %s: %v in %s", expr, err, res.Result.Value)
		}
	}
}

// waitFor waits until expr is truthy in the page, checking it every 20
// milliseconds, and fails the test after 15 seconds. The page may be
// loading: a check that throws counts as false.
func (c *chrome) waitFor(expr string) {
	c.t.Helper()
	var ok bool
	c.eval(fmt.Sprintf(`new Promise((resolve) => {
		const deadline = Date.now() + 15000;
		const check = () => {
			let v = false;
			try { v = !!(%s); } catch (e) {}
			if (v || Date.now() > deadline) resolve(v); else setTimeout(check, 20);
		};
		check();
	})`, expr), &ok)
	if !ok {
		var html string
		c.eval(`document.body ? document.body.innerText : ""`, &html)
		c.t.Fatalf("waited 15 s for %s; the page shows:\n%s", expr, html)
	}
}

// click presses and releases the mouse at the middle of the element
// selector names, as a person would.
func (c *chrome) click(selector string) {
	c.t.Helper()
	var at struct{ X, Y float64 }
	c.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.scrollIntoView({block: "center"});
		const r = e.getBoundingClientRect(); return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()`, selector), &at)
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		c.call(c.session, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": at.X, "y": at.Y, "button": "left", "clickCount": 1}, nil)
	}
}
