/*
 * fuzz_prices.c: libFuzzer target for the SageMaker price lists reader
 * (data_prices_parse, data/data_prices.c), which reads --prices FILE.
 *
 * Each input is a file's bytes, not NUL-terminated (an exact-size copy, so
 * ASan catches a read past the length). Besides what ASan/UBSan catch, it
 * checks the contract of data/data.h:
 *   - failure: EPARSE, EINVAL or ENOMEM in both the return and the context,
 *     a one-line message naming the file, and nothing left allocated;
 *   - success: every list has its region (found again by
 *     data_prices_region), a source URL and a YYYY-MM-DD date, no region
 *     twice, and every price an ml.* instance type with a finite positive
 *     USD per hour that data_price_of gives back, with and without "ml."
 *     (a name whose rest starts with "ml." again is looked up as given).
 * data_prices_free then releases everything (LeakSanitizer checks).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/data.h"

#define FUZZ_NAME "fuzz_prices"
#include "fuzz_util.h"

static void check_list(const data_prices *p, const data_price_list *l)
{
    CHECK(l->region[0] != '\0' && data_prices_region(p, l->region) == l);
    CHECK(!strncmp(l->source, "https://", 8) || !strncmp(l->source, "http://", 7));
    CHECK(strlen(l->as_of) == 10 && l->as_of[4] == '-' && l->as_of[7] == '-');
    CHECK(l->n >= 0 && (l->n == 0 || l->price != NULL));
    for (int k = 0; k < l->n; k++) {
        const data_price *d = &l->price[k];
        CHECK(!strncmp(d->instance, "ml.", 3));
        CHECK(isfinite(d->usd_per_hour) && d->usd_per_hour > 0);
        CHECK(data_price_of(l, d->instance) == d->usd_per_hour);
        /* without its "ml." (unless the rest starts with one itself) */
        if (strlen(d->instance + 3) < 70 && strncmp(d->instance + 3, "ml.", 3) != 0)
            CHECK(data_price_of(l, d->instance + 3) == d->usd_per_hour);
    }
}

static void check_text(char *text, size_t size)
{
    data_prices p;
    st_err err = {0};
    int rc = data_prices_parse(text, size, "fuzz.json", &p, &err);
    if (rc == ST_OK) {
        CHECK(err.code == ST_OK && p.n >= 0 && (p.n == 0 || p.list != NULL));
        for (int i = 0; i < p.n; i++)
            check_list(&p, &p.list[i]);
    } else {
        CHECK(rc == ST_EPARSE || rc == ST_EINVAL || rc == ST_ENOMEM);
        fuzz_check_err_msg(rc, &err, 0);
        CHECK(!strncmp(err.msg, "fuzz.json", 9));
        CHECK(p.n == 0 && p.list == NULL);
    }
    data_prices_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_run(data, size, FUZZ_EXACT, check_text);
}
