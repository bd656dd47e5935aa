package server_test

import (
	"encoding/json"
	"testing"

	"github.com/execlab/executor/registry/api"
)

// TestExecutorExited_NoticeAndConnect: the register response carries a one-shot exit
// notice token; posting it (no bearer) marks the registration's executor exited, and
// connect then answers 409 environment_offline with executor_exited, even while the
// executor's socket is still attached; a wrong token, another registration's id, a replay
// and a superseded registration's token are all 404 and change nothing; a new
// registration clears the mark.
func TestExecutorExited_NoticeAndConnect(t *testing.T) {
	forEachStore(t, "exited", func(t *testing.T, f *fixture, env string) {
		key := keyJSON()
		old := f.register(env, key)
		r := f.register(env, key)
		if r.ExitNoticeToken == "" || len(r.ExitNoticeToken) > api.MaxExitNoticeTokenLen || r.ExitNoticeToken == old.ExitNoticeToken {
			t.Fatalf("exit_notice_token: got %d bytes (equal to the previous: %v), want a fresh token of at most %d",
				len(r.ExitNoticeToken), r.ExitNoticeToken == old.ExitNoticeToken, api.MaxExitNoticeTokenLen)
		}
		f.online(r.URL)
		f.waitOnline(env, true)
		path := api.Path(env, api.ExecutorExitedSuffix)
		notice := func(regID, token string) int {
			st, _, _ := f.post(path, "", api.ExitNoticeRequest{ExecutorRegistrationID: regID, Token: token})
			return st
		}
		for _, c := range []struct {
			name         string
			regID, token string
		}{
			{"wrong token", r.ExecutorRegistrationID, r.ExitNoticeToken + "x"},
			{"superseded registration", old.ExecutorRegistrationID, old.ExitNoticeToken},
			{"token of another registration", old.ExecutorRegistrationID, r.ExitNoticeToken},
			{"empty", "", ""},
		} {
			if st := notice(c.regID, c.token); st != 404 {
				t.Errorf("%s: got %d, want 404", c.name, st)
			}
		}
		if st, code, _ := f.connect(env, tokAll, keyJSON()); st != 200 {
			t.Fatalf("connect before the notice: got %d %s, want 200", st, code)
		}
		if st, _, _ := f.post(path, "", `{"executor_registration_id":"x","token":"y","extra":1}`); st != 400 {
			t.Errorf("notice with an unknown member: got %d, want 400", st)
		}
		if st := notice(r.ExecutorRegistrationID, r.ExitNoticeToken); st != 200 {
			t.Fatalf("notice: got %d, want 200", st)
		}
		if st := notice(r.ExecutorRegistrationID, r.ExitNoticeToken); st != 404 {
			t.Errorf("replayed notice: got %d, want 404 (one-shot)", st)
		}
		st, code, raw := f.post(api.Path(env, api.ConnectSuffix), tokAll, api.ConnectRequest{HarnessPublicKey: keyJSON()})
		var e api.ErrorResponse
		_ = json.Unmarshal(raw, &e)
		if st != 409 || code != api.CodeEnvironmentOffline || !e.Error.ExecutorExited {
			t.Fatalf("connect after the notice: got %d %s executor_exited=%v, want 409 environment_offline executor_exited=true", st, code, e.Error.ExecutorExited)
		}
		r3 := f.register(env, key)
		f.online(r3.URL)
		f.waitOnline(env, true)
		if st, code, _ := f.connect(env, tokAll, keyJSON()); st != 200 {
			t.Fatalf("connect after a new registration: got %d %s, want 200 (the mark cleared)", st, code)
		}
	})
}
