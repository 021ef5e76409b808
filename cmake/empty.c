/* empty.c: keeps a library target valid while its folder has no sources yet. */
typedef int smd_empty_translation_unit;
