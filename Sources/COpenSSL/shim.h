#ifndef BANGBANG_COPENSSL_SHIM_H
#define BANGBANG_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/rand.h>
#include <openssl/kdf.h>
#include <openssl/crypto.h>
#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

/* OpenSSL exposes these as macros, which Swift cannot call. */
static inline long bangbang_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long bangbang_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}
static inline long bangbang_SSL_CTX_set_options(SSL_CTX *ctx, long options) {
    return SSL_CTX_set_options(ctx, options);
}
static inline int bangbang_BIO_pending(BIO *bio) { return (int)BIO_pending(bio); }
static inline long bangbang_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

/* The first DNS name (not a wildcard) in the subjectAltName of the first certificate of a PEM
   file, copied into `buffer`; 1 when found. GENERAL_NAME's union is easier to read in C. */
static inline int bangbang_certificate_file_dns_name(const char *path, char *buffer, int capacity) {
    BIO *file = BIO_new_file(path, "r");
    if (file == NULL) return -1;
    X509 *certificate = PEM_read_bio_X509(file, NULL, NULL, NULL);
    BIO_free(file);
    if (certificate == NULL) return -1;
    GENERAL_NAMES *names = X509_get_ext_d2i(certificate, NID_subject_alt_name, NULL, NULL);
    int found = 0;
    for (int i = 0; names != NULL && i < sk_GENERAL_NAME_num(names) && !found; i++) {
        const GENERAL_NAME *name = sk_GENERAL_NAME_value(names, i);
        if (name->type != GEN_DNS) continue;
        const unsigned char *data = ASN1_STRING_get0_data(name->d.dNSName);
        int length = ASN1_STRING_length(name->d.dNSName);
        if (length <= 0 || length >= capacity || data[0] == '*' || memchr(data, 0, (size_t)length) != NULL) continue;
        memcpy(buffer, data, (size_t)length);
        buffer[length] = 0;
        found = 1;
    }
    GENERAL_NAMES_free(names);
    X509_free(certificate);
    return found;
}

/* The name a client checks the first certificate of a PEM file against when it trusts exactly
   that file: its first DNS subjectAltName; else, when it has no DNS subjectAltName, its subject
   CN (OpenSSL's host check reads the CN of such a certificate); else its first IP address
   subjectAltName, as text. 1 when found, 0 when the certificate names nothing, -1 when the file
   holds no certificate. */
static inline int bangbang_certificate_file_peer_name(const char *path, char *buffer, int capacity) {
    int dns = bangbang_certificate_file_dns_name(path, buffer, capacity);
    if (dns != 0) return dns;
    BIO *file = BIO_new_file(path, "r");
    if (file == NULL) return -1;
    X509 *certificate = PEM_read_bio_X509(file, NULL, NULL, NULL);
    BIO_free(file);
    if (certificate == NULL) return -1;
    int found = 0;
    GENERAL_NAMES *names = X509_get_ext_d2i(certificate, NID_subject_alt_name, NULL, NULL);
    int hasDNS = 0;
    for (int i = 0; names != NULL && i < sk_GENERAL_NAME_num(names); i++) {
        if (sk_GENERAL_NAME_value(names, i)->type == GEN_DNS) hasDNS = 1;
    }
    X509_NAME *subject = X509_get_subject_name(certificate);
    int index = subject == NULL || hasDNS ? -1 : X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
    if (index >= 0) {
        ASN1_STRING *common = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
        const unsigned char *data = ASN1_STRING_get0_data(common);
        int length = ASN1_STRING_length(common);
        if (length > 0 && length < capacity && data[0] != '*' && memchr(data, 0, (size_t)length) == NULL) {
            memcpy(buffer, data, (size_t)length);
            buffer[length] = 0;
            found = 1;
        }
    }
    for (int i = 0; names != NULL && i < sk_GENERAL_NAME_num(names) && !found; i++) {
        const GENERAL_NAME *name = sk_GENERAL_NAME_value(names, i);
        if (name->type != GEN_IPADD) continue;
        int length = ASN1_STRING_length(name->d.iPAddress);
        const unsigned char *bytes = ASN1_STRING_get0_data(name->d.iPAddress);
        if (length == 4 && capacity >= 16) {
            snprintf(buffer, (size_t)capacity, "%u.%u.%u.%u", bytes[0], bytes[1], bytes[2], bytes[3]);
            found = 1;
        } else if (length == 16 && capacity >= 40) {
            int written = 0;
            for (int part = 0; part < 8; part++) {
                written += snprintf(buffer + written, (size_t)(capacity - written), part ? ":%x" : "%x",
                                    (bytes[2 * part] << 8) | bytes[2 * part + 1]);
            }
            found = 1;
        }
    }
    GENERAL_NAMES_free(names);
    X509_free(certificate);
    return found;
}
/* The notAfter of the first certificate of a PEM file, in seconds since the epoch, into
   `seconds`; 1 when read, -1 when the file holds no certificate. */
static inline int bangbang_certificate_file_not_after(const char *path, long long *seconds) {
    BIO *file = BIO_new_file(path, "r");
    if (file == NULL) return -1;
    X509 *certificate = PEM_read_bio_X509(file, NULL, NULL, NULL);
    BIO_free(file);
    if (certificate == NULL) return -1;
    struct tm moment;
    int read = ASN1_TIME_to_tm(X509_get0_notAfter(certificate), &moment);
    X509_free(certificate);
    if (read != 1) return -1;
    *seconds = (long long)timegm(&moment);
    return 1;
}
#endif
