/* test_error.c: the thread-local error message: formatting, wrapping, and
 * a message built from the current message. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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
	    CU_TEST_INFO_NULL,
	};
	return al_test_run("error", tests);
}
