/*
 * hl_table_parse.h - a JSON quota table document parsed into an image
 * (hl_table.h), with carry-over from the table in force, and its digest.
 * Pure: allocates only inside cJSON; no httpd header.
 */
#ifndef HL_TABLE_PARSE_H
#define HL_TABLE_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include "hl_table.h"

/*
 * Parses the JSON document (len bytes, need not be NUL-terminated) into
 * the image at mem (size bytes from hl_table_size(max_rules)).
 * Returns 0 when the document is usable (invalid entries are skipped and
 * reported as errors, the rest applies); returns -1 when the document as a
 * whole is refused (not JSON, not an object, larger than HL_TABLE_MAX_DOC,
 * "routes" not an object, more than max_rules routes): a table failure.
 * Every problem goes to report (may be NULL). Returns the number of
 * skipped entries in *nerrors (may be NULL). Allocates only inside cJSON,
 * and frees it before returning.
 */
int hl_table_parse(void *mem, size_t size, uint32_t max_rules,
                   const char *doc, size_t len,
                   hl_table_report_fn *report, void *baton, int *nerrors);

/*
 * hl_table_parse, then carry-over from prev, the table in force (NULL: no
 * carry-over, exactly hl_table_parse): each route whose entry in the
 * document was skipped as invalid keeps the rule it has in prev, unless
 * the document has a valid entry for the same route too. A route absent
 * from the document is not kept. Each rule kept is reported as
 * HL_PROBLEM_KEPT with the route as written and the field at fault (NULL
 * when the entry as a whole is bad), after that entry's errors; kept
 * entries are still counted in *nerrors. Sets *nkept (may be NULL) to the
 * rules kept. Returns as hl_table_parse (on -1 nothing is kept). prev is
 * only read and must not overlap mem.
 */
int hl_table_parse_keep(void *mem, size_t size, uint32_t max_rules,
                        const char *doc, size_t len, const hl_table_t *prev,
                        hl_table_report_fn *report, void *baton,
                        int *nerrors, int *nkept);

/*
 * Returns the digest of a document (len bytes; doc may be NULL when len is
 * 0), as hl_table_parse stores it in the image: equal documents have equal
 * digests, so a reloader can tell that a document is the one it parsed
 * last. A 64-bit non-cryptographic hash. Never fails.
 */
uint64_t hl_table_digest(const char *doc, size_t len);

#endif
