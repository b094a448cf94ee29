-- A run's row is updated several times in its first seconds (its step counts at every decision, its status
-- at the end). With full pages each update was a new row version elsewhere, and a new entry in every one of
-- the eight indexes of weft.runs; with room left in each page, PostgreSQL keeps the new version in the same
-- page and the indexes unchanged (a HOT update), since none of the columns those updates change is indexed.
-- Pages written before this keep no room until they are rewritten (VACUUM FULL, or in time as runs are
-- purged): nothing else changes.
ALTER TABLE weft.runs SET (fillfactor = 70);
