/*
 * mod_hotlimit_expr.h - the ap_expr function hotlimit_param(NAME): what
 * PHP holds in $_REQUEST[NAME], read as the param: routes and keys read it,
 * for <If>, SetEnvIfExpr, RewriteCond expr and Require expr.
 *
 * It lets a configuration ask what the PHP application will see where
 * httpd's own variables (QUERY_STRING) would be read by another parser:
 * `<If "-n hotlimit_param('u') && -n hotlimit_param('p')">` is true for a
 * request that carries a user name and a password in its query or its
 * POST form body, however they are encoded (%70=, multipart). An array
 * reads as its first key, as for param: routes (do[login]=x is "login",
 * p[]=x is "0"); a NUL byte as "%00".
 */
#ifndef MOD_HOTLIMIT_EXPR_H
#define MOD_HOTLIMIT_EXPR_H

/* Registers hotlimit_param with ap_expr (register_hooks). */
void hl_expr_register(void);

#endif
