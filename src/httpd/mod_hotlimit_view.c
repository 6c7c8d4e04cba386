/*
 * mod_hotlimit_view.c - which counters a status page may show and reset
 * (mod_hotlimit_view.h).
 */
#include <string.h>

#include "httpd.h"
#include "http_config.h"
#include "http_main.h"

#include "mod_hotlimit_conf.h"
#include "mod_hotlimit_view.h"

/* Returns 1 if key (len bytes) starts with the tag of sc (not empty). */
static int starts_with_tag(const hl_server_conf_t *sc, const char *key,
                           size_t len)
{
    return sc && sc->tag_len && sc->tag_len <= len
           && memcmp(key, sc->tag, sc->tag_len) == 0;
}

int hl_view_owns(const server_rec *s, const char *key, size_t len)
{
    const hl_server_conf_t *own = ap_get_module_config(s->module_config,
                                                       &hotlimit_module);
    const server_rec *v;

    if (!s->is_virtual)
        return 1;
    if (!starts_with_tag(own, key, len))
        return 0;
    /* Virtual hosts with the same tag share their counters: a longer tag
     * that also fits is another host's ("a:8080" after "a:80"). */
    for (v = ap_server_conf; v; v = v->next) {
        const hl_server_conf_t *sc = ap_get_module_config(v->module_config,
                                                          &hotlimit_module);
        if (v->is_virtual && starts_with_tag(sc, key, len)
            && sc->tag_len > own->tag_len)
            return 0;
    }
    return 1;
}
