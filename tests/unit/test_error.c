/* test_error.c: the thread-local error message: formatting, wrapping, and
 * a message built from the current message. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include "airlock/error.h"
#include "al_test.h"

static void test_error__set_formats_and_returns_code(void)
{
	CU_ASSERT_EQUAL(al_error_set(AL_EPARSE, "bad '%s' at %d", "x", 3),
	                AL_EPARSE);
	CU_ASSERT_STRING_EQUAL(al_error_message(), "bad 'x' at 3");
	al_error_clear();
	CU_ASSERT_STRING_EQUAL(al_error_message(), "");
}

/* The bug: "sync deadline reached: sync deadline reached: ATCH '...'"
 * (the buffer formatted into itself). */
static void test_error__set_may_use_the_current_message(void)
{
	al_error_set(AL_ETIMEOUT, "PATCH '/apis/x': 409 Conflict");
	CU_ASSERT_EQUAL(al_error_set(AL_ETIMEOUT, "sync deadline reached: %s",
	                             al_error_message()),
	                AL_ETIMEOUT);
	CU_ASSERT_STRING_EQUAL(al_error_message(),
	                       "sync deadline reached: PATCH '/apis/x': 409 "
	                       "Conflict");
	/* the message as a later argument, and twice */
	al_error_set(AL_EIO, "disk");
	al_error_set(AL_EIO, "%d %s and %s", 2, al_error_message(),
	             al_error_message());
	CU_ASSERT_STRING_EQUAL(al_error_message(), "2 disk and disk");
	/* a suffix of the message */
	al_error_set(AL_EIO, "abcdef");
	al_error_set(AL_EIO, "<%s>", al_error_message() + 3);
	CU_ASSERT_STRING_EQUAL(al_error_message(), "<def>");
}

static void test_error__errno_and_wrap_may_use_the_current_message(void)
{
	al_error_set(AL_EIO, "writing 'f'");
	CU_ASSERT_EQUAL(al_error_errno(ENOENT, "%s", al_error_message()),
	                AL_ENOTFOUND);
	CU_ASSERT_STRING_EQUAL(al_error_message(), "writing 'f': No such "
	                                           "file or directory");
	al_error_set(AL_EIO, "inner");
	al_error_wrap(AL_EIO, "outer (%s)", al_error_message());
	CU_ASSERT_STRING_EQUAL(al_error_message(), "outer (inner): inner");
}

static void test_error__long_message_is_truncated_not_overrun(void)
{
	char big[3000];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	al_error_set(AL_EIO, "%s", big);
	CU_ASSERT_EQUAL(strlen(al_error_message()), 1023);
	al_error_set(AL_EIO, "x: %s", al_error_message());
	CU_ASSERT_EQUAL(strlen(al_error_message()), 1023);
	CU_ASSERT_EQUAL(strncmp(al_error_message(), "x: aaa", 6), 0);
}

/* The airlock program may leave OpenSSL's error strings unloaded
 * (tools/airlock/cli_crypto.c): an OpenSSL error is then reported by its
 * code, which 'openssl errstr' explains, and the queue is emptied. */
static void test_error__openssl_without_strings_names_the_code(void)
{
	char want[128];
	unsigned long e;

	/* the first OpenSSL call of this process: no strings, ever */
	CU_ASSERT_EQUAL(
	    OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS, NULL), 1);
	ERR_raise(ERR_LIB_EVP, ERR_R_UNSUPPORTED);
	e = ERR_peek_error();
	CU_ASSERT_NOT_EQUAL(e, 0);
	CU_ASSERT_PTR_NULL(ERR_reason_error_string(e));
	CU_ASSERT_EQUAL(al_error_openssl(AL_EUNSUPPORTED, "loading '%s'", "k"),
	                AL_EUNSUPPORTED);
	(void)snprintf(want, sizeof(want),
	               "loading 'k': OpenSSL error %08lX ('openssl errstr "
	               "%08lX')",
	               e, e);
	CU_ASSERT_STRING_EQUAL(al_error_message(), want);
	CU_ASSERT_EQUAL(ERR_peek_error(), 0);
	/* a system error is worded from errno, strings or not */
	ERR_raise(ERR_LIB_SYS, ENOENT);
	al_error_openssl(AL_EIO, "opening");
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), strerror(ENOENT)));
	/* no error queued: the message alone */
	al_error_openssl(AL_EIO, "nothing queued");
	CU_ASSERT_STRING_EQUAL(al_error_message(), "nothing queued");
}

/* al_error_oom: the preallocated message, which wrap prefixes, set and
 * clear replace, and a message built from it keeps. */
static void test_error__oom_message_is_kept_wrapped_and_replaced(void)
{
	al_error_set(AL_EIO, "a long earlier message about a disk");
	CU_ASSERT_EQUAL(al_error_oom(), AL_ENOMEM);
	CU_ASSERT_STRING_EQUAL(al_error_message(), "out of memory");
	CU_ASSERT_EQUAL(al_error_wrap(AL_ENOMEM, "reading 'x'"), AL_ENOMEM);
	CU_ASSERT_STRING_EQUAL(al_error_message(),
	                       "reading 'x': out of memory");
	al_error_oom();
	al_error_set(AL_ENOMEM, "copying: %s", al_error_message());
	CU_ASSERT_STRING_EQUAL(al_error_message(), "copying: out of memory");
	al_error_oom();
	/* a prefix already there is not repeated, and the message stays */
	al_error_wrap(AL_ENOMEM, "out of memory");
	CU_ASSERT_STRING_EQUAL(al_error_message(), "out of memory");
	al_error_clear();
	CU_ASSERT_STRING_EQUAL(al_error_message(), "");
	al_error_oom();
	al_error_errno(ENOENT, "open 'y'");
	CU_ASSERT_PTR_NOT_NULL(strstr(al_error_message(), "open 'y': "));
}

int main(void)
{
	CU_TestInfo tests[] = {
	    {"test_error__set_formats_and_returns_code",
	     test_error__set_formats_and_returns_code},
	    {"test_error__set_may_use_the_current_message",
	     test_error__set_may_use_the_current_message},
	    {"test_error__errno_and_wrap_may_use_the_current_message",
	     test_error__errno_and_wrap_may_use_the_current_message},
	    {"test_error__long_message_is_truncated_not_overrun",
	     test_error__long_message_is_truncated_not_overrun},
	    {"test_error__openssl_without_strings_names_the_code",
	     test_error__openssl_without_strings_names_the_code},
	    {"test_error__oom_message_is_kept_wrapped_and_replaced",
	     test_error__oom_message_is_kept_wrapped_and_replaced},
	    CU_TEST_INFO_NULL,
	};
	return al_test_run("error", tests);
}
