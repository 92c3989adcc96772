/* test_fs.c: atomic writes, bounded reads, temporary files, locks, and atomicity under kill -9. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "airlock/buf.h"
#include "airlock/clock.h"
#include "airlock/digest.h"
#include "airlock/error.h"
#include "airlock/fs.h"
#include "al_test.h"

static char *tmp(const char *name)
{
	return al_path_join(al_test_tmpdir(), name);
}

static void test_fs__path_join(void)
{
	char *p = al_path_join("/a/b/", "/c");

	CU_ASSERT_STRING_EQUAL(p, "/a/b/c");
	free(p);
	p = al_path_join("a", "b/c");
	CU_ASSERT_STRING_EQUAL(p, "a/b/c");
	free(p);
}

static void test_fs__write_atomic_then_read(void)
{
	char *p = tmp("atomic.txt");
	al_buf b = AL_BUF_INIT(100);

	CU_ASSERT_EQUAL(al_fs_write_atomic(p, "first", 5), 0);
	CU_ASSERT_EQUAL(al_fs_write_atomic(p, "second", 6), 0);
	CU_ASSERT_EQUAL(al_fs_read_file(p, &b), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&b), "second");
	al_buf_free(&b);
	free(p);
}

/* The same bytes again leave the file as it is (the same inode: nothing
 * written, nothing synced); other bytes, or a FIFO at the path, are
 * replaced as always. */
static void test_fs__write_atomic_same_bytes_keeps_the_file(void)
{
	char *p = tmp("same.txt");
	struct stat a, b;
	al_buf buf = AL_BUF_INIT(100);

	unlink(p);
	CU_ASSERT_EQUAL(al_fs_write_atomic(p, "same", 4), 0);
	CU_ASSERT_EQUAL(stat(p, &a), 0);
	CU_ASSERT_EQUAL(al_fs_write_atomic(p, "same", 4), 0);
	CU_ASSERT_EQUAL(stat(p, &b), 0);
	CU_ASSERT_EQUAL(a.st_ino, b.st_ino);
	CU_ASSERT_EQUAL(al_fs_write_atomic(p, "samE", 4), 0);
	CU_ASSERT_EQUAL(stat(p, &b), 0);
	CU_ASSERT_NOT_EQUAL(a.st_ino, b.st_ino);
	CU_ASSERT_EQUAL(al_fs_write_atomic(p, "samE and more", 13), 0);
	CU_ASSERT_EQUAL(al_fs_read_file(p, &buf), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&buf), "samE and more");
	unlink(p);
	CU_ASSERT_EQUAL(mkfifo(p, 0644), 0);
	CU_ASSERT_EQUAL(al_fs_write_atomic(p, "", 0), 0);
	CU_ASSERT_EQUAL(lstat(p, &b), 0);
	CU_ASSERT(S_ISREG(b.st_mode));
	al_buf_free(&buf);
	unlink(p);
	free(p);
}

static void test_fs__read_is_bounded_and_names_path(void)
{
	char *p = tmp("big.txt");
	al_buf b = AL_BUF_INIT(4);

	CU_ASSERT_EQUAL(al_fs_write_atomic(p, "0123456789", 10), 0);
	CU_ASSERT_EQUAL(al_fs_read_file(p, &b), AL_ELIMIT);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), p));
	CU_ASSERT_EQUAL(al_fs_read_file("/nonexistent/file", &b), AL_ENOTFOUND);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "/nonexistent/file"));
	al_buf_free(&b);
	free(p);
}

static void test_fs__read_refuses_symlink(void)
{
	char *target = tmp("target.txt"), *link = tmp("link.txt");
	al_buf b = AL_BUF_INIT(100);

	al_fs_write_atomic(target, "x", 1);
	CU_ASSERT_EQUAL(symlink(target, link), 0);
	CU_ASSERT(al_fs_read_file(link, &b) < 0);
	al_buf_free(&b);
	free(target);
	free(link);
}

static void test_fs__tmpfile_commit_and_abort(void)
{
	const char *dir = al_test_tmpdir();
	char *dst = tmp("committed.bin");
	al_tmpfile *t = NULL;
	char *tpath;
	al_buf b = AL_BUF_INIT(100);

	CU_ASSERT_EQUAL(al_tmpfile_new(&t, dir), 0);
	CU_ASSERT_EQUAL(al_tmpfile_write(t, "abc", 3), 0);
	CU_ASSERT_EQUAL(al_tmpfile_truncate(t), 0);
	CU_ASSERT_EQUAL(al_tmpfile_write(t, "xyz!", 4), 0);
	CU_ASSERT_EQUAL(al_tmpfile_size(t), 4);
	CU_ASSERT_EQUAL(al_tmpfile_commit(t, dst), 0);
	CU_ASSERT_EQUAL(al_fs_read_file(dst, &b), 0);
	CU_ASSERT_STRING_EQUAL(al_buf_cstr(&b), "xyz!");
	/* an aborted temporary file leaves nothing behind */
	t = NULL;
	CU_ASSERT_EQUAL(al_tmpfile_new(&t, dir), 0);
	tpath = al_strdup(al_tmpfile_path(t));
	al_tmpfile_write(t, "junk", 4);
	al_tmpfile_free(t);
	CU_ASSERT_EQUAL(al_fs_exists(tpath), 0);
	free(tpath);
	al_buf_free(&b);
	free(dst);
}

static void test_fs__mkdir_p(void)
{
	char *p = tmp("x/y/z");

	CU_ASSERT_EQUAL(al_fs_mkdir_p(p, 0755), 0);
	CU_ASSERT_EQUAL(al_fs_mkdir_p(p, 0755), 0);
	CU_ASSERT_EQUAL(al_fs_exists(p), 1);
	free(p);
}

static void test_fs__lock_excludes_other_processes(void)
{
	char *p = tmp("lockfile");
	al_lock *l = NULL;
	pid_t pid;
	int status = 0;
	uint64_t start;

	CU_ASSERT_EQUAL(al_lock_acquire(&l, p, 0), 0);
	pid = fork();
	if (pid == 0) {
		al_lock *l2 = NULL;
		int rc = al_lock_acquire(&l2, p, 0);
		_exit(rc == AL_ELOCKED ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	al_lock_free(l);
	l = NULL;
	/* A waiting locker gets it once the holder lets go. The child is
	 * forked before the parent locks: a child forked while the lock is
	 * held would share the parent's open file description. */
	pid = fork();
	if (pid == 0) {
		al_lock *l2 = NULL;
		int rc;
		al_sleep_ms(150, NULL);
		rc = al_lock_acquire(&l2, p, 5000);
		_exit(rc == 0 ? 0 : 1);
	}
	CU_ASSERT_EQUAL(al_lock_acquire(&l, p, 0), 0);
	start = al_clock_now_ms();
	al_sleep_ms(400, NULL);
	al_lock_free(l);
	waitpid(pid, &status, 0);
	CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CU_ASSERT(al_clock_now_ms() - start < 4000);
	free(p);
}

/* A writer killed with SIGKILL at random moments never leaves a torn file. */
static void test_fs__atomic_write_survives_kill9(void)
{
	char *p = tmp("torn.txt");
	unsigned seed = al_test_seed();
	int round;

	al_fs_write_atomic(p, "A-0000", 6);
	for (round = 0; round < 20; round++) {
		pid_t pid = fork();
		if (pid == 0) {
			char content[4096];
			int i;
			for (i = 0;; i++) {
				memset(content, 'A' + (i % 26), sizeof(content));
				al_fs_write_atomic(p, content, sizeof(content));
			}
		}
		al_sleep_ms((uint64_t)(rand_r(&seed) % 20), NULL);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		{
			al_buf b = AL_BUF_INIT(8192);
			size_t i;
			int uniform = 1;
			CU_ASSERT_EQUAL(al_fs_read_file(p, &b), 0);
			for (i = 1; i < b.len; i++)
				if (b.ptr[i] != b.ptr[0] && !(b.len == 6))
					uniform = 0;
			CU_ASSERT(b.len == 6 || b.len == 4096);
			CU_ASSERT(uniform);
			al_buf_free(&b);
		}
	}
	free(p);
}

/*
 * Run fn(arg) in a child; 1 if it returned within 10 s (its status in
 * *code), 0 if it blocked (the child is then killed).
 */
static int returns_promptly(int (*fn)(const char *), const char *arg, int *code)
{
	pid_t pid = fork();
	int status = 0, i;

	if (pid == 0)
		_exit(-fn(arg) & 0xff);
	if (pid < 0)
		return 0;
	for (i = 0; i < 1000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			*code = WIFEXITED(status) ? -WEXITSTATUS(status) : 1;
			return 1;
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return 0;
}

static int read_one(const char *path)
{
	al_buf b = AL_BUF_INIT(1024);
	int rc = al_fs_read_file(path, &b);

	al_buf_free(&b);
	return rc;
}

static int digest_one(const char *path)
{
	al_digest d;

	return al_digest_file(&d, AL_DIGEST_SHA256, path, NULL);
}

static void test_fs__read_refuses_fifo_without_blocking(void)
{
	char *p = tmp("fifo-read");
	al_buf b = AL_BUF_INIT(1024);
	int code = 0;

	unlink(p);
	CU_ASSERT_EQUAL(mkfifo(p, 0644), 0);
	CU_ASSERT(returns_promptly(read_one, p, &code));
	CU_ASSERT_EQUAL(code, AL_EIO);
	CU_ASSERT(returns_promptly(digest_one, p, &code));
	CU_ASSERT_EQUAL(code, AL_EIO);
	/* in this process too: the message names the path and the type */
	if (code == AL_EIO) {
		CU_ASSERT_EQUAL(al_fs_read_file(p, &b), AL_EIO);
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), p));
		CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "a FIFO"));
	}
	CU_ASSERT_EQUAL(al_fs_read_file("/dev/null", &b), AL_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "a character device"));
	al_buf_free(&b);
	unlink(p);
	free(p);
}

static void test_fs__open_regular_gives_a_blocking_descriptor(void)
{
	char *p = tmp("regular.txt");
	struct stat st;
	int fd = -1;

	CU_ASSERT_EQUAL(al_fs_write_atomic(p, "abc", 3), 0);
	CU_ASSERT_EQUAL(al_fs_open_regular(&fd, p, &st), 0);
	CU_ASSERT(fd >= 0);
	CU_ASSERT_EQUAL(st.st_size, 3);
	if (fd >= 0) {
		CU_ASSERT_EQUAL(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
		close(fd);
	}
	CU_ASSERT_EQUAL(al_fs_open_regular(&fd, al_test_tmpdir(), NULL), AL_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "a directory"));
	free(p);
}

int main(void)
{
	CU_TestInfo tests[] = {
		{"test_fs__path_join", test_fs__path_join},
		{"test_fs__write_atomic_then_read", test_fs__write_atomic_then_read},
		{"test_fs__write_atomic_same_bytes_keeps_the_file", test_fs__write_atomic_same_bytes_keeps_the_file},
		{"test_fs__read_is_bounded_and_names_path", test_fs__read_is_bounded_and_names_path},
		{"test_fs__read_refuses_symlink", test_fs__read_refuses_symlink},
		{"test_fs__tmpfile_commit_and_abort", test_fs__tmpfile_commit_and_abort},
		{"test_fs__mkdir_p", test_fs__mkdir_p},
		{"test_fs__lock_excludes_other_processes", test_fs__lock_excludes_other_processes},
		{"test_fs__atomic_write_survives_kill9", test_fs__atomic_write_survives_kill9},
		{"test_fs__read_refuses_fifo_without_blocking", test_fs__read_refuses_fifo_without_blocking},
		{"test_fs__open_regular_gives_a_blocking_descriptor", test_fs__open_regular_gives_a_blocking_descriptor},
		CU_TEST_INFO_NULL,
	};
	return al_test_run("fs", tests);
}
