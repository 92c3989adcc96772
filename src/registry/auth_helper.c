/* auth_helper.c: docker credential helpers ("docker-credential-NAME get"),
 * run without a shell, bounded in time and output. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "airlock/buf.h"
#include "airlock/clock.h"
#include "airlock/error.h"
#include "airlock/log.h"
#include "auth_int.h"
#include "clock_int.h"

extern char **environ;

static int helper_name_ok(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 64 || s[0] == '.')
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

/* Write all of p to fd without dying of SIGPIPE when the helper does not
 * read its input (the signal is blocked in this thread and a pending one
 * is consumed). A short write is not an error: the helper decides. */
static void write_input(int fd, const char *p, size_t n)
{
	sigset_t pipe_set, old;
	struct timespec zero = {0, 0};
	int blocked;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	blocked = pthread_sigmask(SIG_BLOCK, &pipe_set, &old) == 0;
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		n -= (size_t)w;
	}
	if (blocked) {
		while (sigtimedwait(&pipe_set, NULL, &zero) > 0) {
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
}

/* Collect the helper's stdout until EOF, the bound or the deadline. */
static int read_output(int fd, al_buf *out, uint64_t end_ms, const char *name)
{
	char chunk[4096];

	for (;;) {
		uint64_t now = al__real_now_ms();
		struct pollfd pfd = {fd, POLLIN, 0};
		ssize_t r;
		int pr;

		if (now >= end_ms)
			return al_error_set(AL_ETIMEOUT,
			                    "credential helper '%s' did not "
			                    "answer in time (killed)",
			                    name);
		pr = poll(&pfd, 1,
		          (int)(end_ms - now > 1000 ? 1000 : end_ms - now));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return al_error_set(AL_EIO,
			                    "credential helper '%s': poll: %s",
			                    name, strerror(errno));
		if (pr == 0)
			continue;
		r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return al_error_set(AL_EIO,
			                    "credential helper '%s': read: %s",
			                    name, strerror(errno));
		if (r == 0)
			return 0;
		if (al_buf_append(out, chunk, (size_t)r) < 0)
			return al_error_set(AL_ELIMIT,
			                    "credential helper '%s' wrote more "
			                    "than %d bytes (killed)",
			                    name, AL_AUTH_HELPER_OUT_MAX);
	}
}

/* Wait for pid until end_ms; kill it past that. *status gets the wait
 * status; 1 if it had to be killed. */
static int reap(pid_t pid, uint64_t end_ms, int *status)
{
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);

		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR) {
			*status = 0;
			return 0;
		}
		if (al__real_now_ms() >= end_ms) {
			kill(pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
			}
			return 1;
		}
		al__real_sleep_ms(10);
	}
}

static int parse_answer(const al_buf *out, const char *name, char **user,
                        char **pass)
{
	json_t *root, *u, *s;
	int rc = 0;

	root = json_loadb(out->ptr != NULL ? (const char *)out->ptr : "",
	                  out->len, JSON_REJECT_DUPLICATES, NULL);
	u = json_is_object(root) ? json_object_get(root, "Username") : NULL;
	s = json_is_object(root) ? json_object_get(root, "Secret") : NULL;
	if (!json_is_string(u) || !json_is_string(s)) {
		rc = al_error_set(AL_EAUTH,
		                  "credential helper '%s' answered something "
		                  "other than {\"Username\", \"Secret\"}",
		                  name);
	} else if (strcmp(json_string_value(u), "<token>") == 0) {
		/* an identity token (OAuth2 refresh token): not supported */
		al_log_warn("credential helper '%s' gave an identity token, "
		            "which airlock does not use",
		            name);
		rc = al_error_set(AL_ENOTFOUND,
		                  "credential helper '%s' gave an identity "
		                  "token only",
		                  name);
	} else if (json_string_length(u) == 0) {
		rc = al_error_set(AL_ENOTFOUND,
		                  "credential helper '%s' has no user", name);
	} else {
		*user = al_strdup(json_string_value(u));
		*pass = al_strdup(json_string_value(s));
		if (*user == NULL || *pass == NULL) {
			free(*user);
			free(*pass);
			*user = *pass = NULL;
			rc = al_error_set(AL_ENOMEM, "out of memory");
		}
	}
	if (s != NULL && json_is_string(s))
		OPENSSL_cleanse((void *)json_string_value(s),
		                json_string_length(s));
	json_decref(root);
	return rc;
}

int al_auth__run_helper(const char *helper, const char *server,
                        uint64_t timeout_ms, char **user, char **pass)
{
	al_buf out = AL_BUF_INIT(AL_AUTH_HELPER_OUT_MAX);
	posix_spawn_file_actions_t fa;
	char name[80], get[] = "get";
	char *argv[3];
	int in[2] = {-1, -1}, outp[2] = {-1, -1};
	int fa_ok = 0, status = 0, killed, rc;
	pid_t pid = -1;
	uint64_t end_ms;

	if (helper == NULL || server == NULL || user == NULL || pass == NULL)
		return al_error_set(AL_EINVAL,
		                    "al_auth__run_helper: missing argument");
	if (!helper_name_ok(helper))
		return al_error_set(AL_EINVAL,
		                    "credential helper name '%s' is not "
		                    "[A-Za-z0-9._-] (refused)",
		                    helper);
	if (snprintf(name, sizeof(name), "docker-credential-%s", helper) < 0)
		return al_error_set(AL_EINVAL, "bad helper name");
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(outp, O_CLOEXEC) < 0) {
		rc = al_error_set(AL_EIO, "cannot run '%s': pipe: %s", name,
		                  strerror(errno));
		goto out;
	}
	if (posix_spawn_file_actions_init(&fa) != 0) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	fa_ok = 1;
	if (posix_spawn_file_actions_adddup2(&fa, in[0], 0) != 0 ||
	    posix_spawn_file_actions_adddup2(&fa, outp[1], 1) != 0 ||
	    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY,
	                                     0) != 0) {
		rc = al_error_set(AL_ENOMEM, "out of memory");
		goto out;
	}
	argv[0] = name;
	argv[1] = get;
	argv[2] = NULL;
	rc = posix_spawnp(&pid, name, &fa, NULL, argv, environ);
	if (rc != 0) {
		pid = -1;
		rc = al_error_set(rc == ENOENT ? AL_ENOTFOUND : AL_EIO,
		                  "cannot run credential helper '%s': %s", name,
		                  strerror(rc));
		if (rc == AL_ENOTFOUND)
			rc = al_error_set(AL_EAUTH,
			                  "credential helper '%s' is not on "
			                  "$PATH",
			                  name);
		goto out;
	}
	close(in[0]);
	close(outp[1]);
	in[0] = outp[1] = -1;
	end_ms = al__real_now_ms() + (timeout_ms > 0 ? timeout_ms : 1);
	write_input(in[1], server, strlen(server));
	close(in[1]);
	in[1] = -1;
	rc = read_output(outp[0], &out, end_ms, name);
	killed = reap(pid, rc < 0 ? 0 : end_ms, &status);
	pid = -1;
	if (rc < 0)
		goto out;
	if (killed) {
		rc = al_error_set(AL_ETIMEOUT,
		                  "credential helper '%s' did not exit in time "
		                  "(killed)",
		                  name);
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char msg[200];

		al_str_escape(msg, sizeof(msg), al_buf_cstr(&out),
		              strcspn(al_buf_cstr(&out), "\n"));
		if (strstr(al_buf_cstr(&out), "credentials not found") !=
		    NULL) {
			rc = al_error_set(AL_ENOTFOUND,
			                  "credential helper '%s' has no "
			                  "credentials for '%s'",
			                  name, server);
			goto out;
		}
		rc = al_error_set(
		    AL_EAUTH,
		    "credential helper '%s' failed for '%s' (%s "
		    "%d): %s",
		    name, server, WIFEXITED(status) ? "exit status" : "signal",
		    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
		    msg[0] != '\0' ? msg : "no message");
		goto out;
	}
	rc = parse_answer(&out, name, user, pass);
out:
	if (pid > 0)
		reap(pid, 0, &status);
	if (fa_ok)
		posix_spawn_file_actions_destroy(&fa);
	if (in[0] >= 0)
		close(in[0]);
	if (in[1] >= 0)
		close(in[1]);
	if (outp[0] >= 0)
		close(outp[0]);
	if (outp[1] >= 0)
		close(outp[1]);
	if (out.ptr != NULL)
		OPENSSL_cleanse(out.ptr, out.len);
	al_buf_free(&out);
	return rc;
}
