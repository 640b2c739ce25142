/* Reproducer for nsys_sqlite_reads_differ_run_to_run.sqlite (README.md): SQLite alone, no kernlens.
   gcc -O1 sqlite_reads_it_alone.c -lsqlite3 -o t && ./t nsys_sqlite_reads_differ_run_to_run.sqlite \
     "SELECT start, end, deviceId, correlationId, demangledName, gridX FROM CUPTI_ACTIVITY_KIND_KERNEL"
   Each of 200 fresh connections steps once: a first row (start NULL or not), or SQLITE_CORRUPT. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char** argv) {
  FILE* f = fopen(argv[1], "rb"); fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
  char* buf = malloc(n); fread(buf, 1, n, f); fclose(f);
  int tally[4] = {0};
  for (int i = 0; i < 200; ++i) {
    void* junk = malloc(1 + (rand() % 5000));  /* move the heap a little */
    sqlite3* db; sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, NULL);
    sqlite3_deserialize(db, "main", (unsigned char*)buf, n, n, SQLITE_DESERIALIZE_READONLY);
    sqlite3_stmt* st;
    if (sqlite3_prepare_v2(db, argv[2], -1, &st, NULL) != SQLITE_OK) { printf("prep %s\n", sqlite3_errmsg(db)); return 1; }
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) tally[sqlite3_column_type(st, 0) == SQLITE_NULL ? 1 : 0]++; else tally[rc == SQLITE_CORRUPT ? 2 : 3]++;
    sqlite3_finalize(st); sqlite3_close(db); free(junk);
  }
  printf("row-with-start %d row-null-start %d corrupt %d other %d\n", tally[0], tally[1], tally[2], tally[3]);
}
