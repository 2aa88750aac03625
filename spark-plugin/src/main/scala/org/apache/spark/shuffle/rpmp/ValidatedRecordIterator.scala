// The records of a reduce task's map outputs, read from RPMP and proven whole
// (docs/append-path.md section 2). Round 0 lists each partition's object (getMeta), keeps
// chunks tagged with a valid map attempt, reads them (RecordFetcher) and deserializes each
// chunk; the ChunkLedger drops duplicates and, when every chunk is consumed, says which
// outputs are not proven whole. Those are listed again - on every replica in cluster mode -
// and their missing chunks read, up to spark.rpmp.reader.retries more rounds with doubling
// waits; what is still not whole then raises a FetchFailedException naming that map, so Spark
// recomputes it. A chunk that cannot be read, has a bad header, or fails to decode before
// yielding a record counts as missing; a decode error after some of its records were
// returned, or two chunks with one seq and different bytes, fail at once.
// Cluster mode: a partition's records are in its group and the group's extents
// (GroupExtents, listed once per task and again each retry round); the ledger checks the
// union, so a chunk missing from any extent is missing like any other.
// Owns every RpmpBuffer it reads: close() (the task completion listener) frees the one being
// consumed and those in flight. Task thread only. Created by RpmpShuffleReader.read().
package org.apache.spark.shuffle.rpmp

import java.io.{IOException, InputStream}

import scala.collection.mutable
import scala.util.control.NonFatal

import io.rpmp.client.{NodeIds, RecordRef, RpmpBuffer, RpmpNotFoundException}

import org.apache.spark.TaskContext
import org.apache.spark.internal.Logging
import org.apache.spark.serializer.{SerializerInstance, SerializerManager}
import org.apache.spark.shuffle.{FetchFailedException, ShuffleReadMetricsReporter}
import org.apache.spark.storage.ShuffleBlockId

private[spark] class ValidatedRecordIterator(
    coords: RpmpShuffleCoordinates,
    expected: Map[Int, Seq[ExpectedOutput]],
    ledger: ChunkLedger,
    clients: RpmpClientCache,
    conf: RpmpConf,
    serializerManager: SerializerManager,
    serializerInstance: SerializerInstance,
    readMetrics: ShuffleReadMetricsReporter,
    beforeRetry: Int => Unit = _ => (),
    listOnlyWanted: Boolean = false) // a map-range read: the server lists only wanted attempts
  extends Iterator[(Any, Any)] with Logging {

  private val notes = mutable.HashMap.empty[(Int, Long), String] // last trouble per output
  private var round = 0
  // group -> (round it was listed in, its extents)
  private val extentsOf = mutable.HashMap.empty[String, (Int, Seq[String])]
  private var fetcher: RecordFetcher = newFetcher(listRound0())
  private var buffer: RpmpBuffer = _
  private var stream: InputStream = _
  private var records: Iterator[(Any, Any)] = _
  private var chunk: ChunkHeader = _
  private var yieldedFromChunk = false
  private var done = false

  /** The namespaces holding `partition`'s records: its group, then the group's extents. */
  private def namespacesOf(partition: Int): Seq[String] = {
    val group = coords.namespaceOf(partition)
    if (!coords.clusterMode) return Seq(group)
    val listed = extentsOf.get(group).filter(_._1 == round).map(_._2).getOrElse {
      val client = clients.get(coords.serverFor(partition))
      // Round 0 of a task in a stage: this JVM's listing for the stage attempt; a retry
      // round (a chunk was missing) lists afresh.
      val task = Option(TaskContext.get())
      val x = task.filter(_ => round == 0)
        .map(t => GroupExtents.listForStage(client, group, t.stageId(), t.stageAttemptNumber()))
        .getOrElse(GroupExtents.list(client, group))
      extentsOf(group) = (round, x)
      x
    }
    group +: listed
  }

  private def newFetcher(refs: IndexedSeq[RecordToFetch]) =
    new RecordFetcher(refs, conf.maxBytesInFlight, conf.callTimeoutMs, clients,
      waitNanos => readMetrics.incFetchWaitTime(waitNanos / 1000000))

  private def fetchFailed(e: ExpectedOutput, why: String, cause: Throwable) = {
    RpmpMetrics.fetchFailures.inc()
    new FetchFailedException(e.location, coords.shuffleId, e.mapId, e.mapIndex, e.partition,
      s"RPMP shuffle ${coords.shuffleId} partition ${e.partition} map ${e.mapIndex} attempt " +
        s"${e.mapId}: $why", cause)
  }

  private def expectedFor(partition: Int, mapId: Long): ExpectedOutput =
    expected(partition).find(_.mapId == mapId).get

  /** Records of `partition`'s listing worth reading for outputs `wanted`. */
  private def select(partition: Int, server: String, refs: Iterable[RecordRef],
      wanted: Set[Long], seen: mutable.HashSet[(Long, Long, Int)]): Seq[RecordToFetch] =
    refs.iterator
      .filter(r => wanted.contains(r.tag) && !ledger.alreadyHave(partition, r))
      .filter(r => seen.add((r.tag, r.length, r.crc))) // one copy when replicas list it twice
      .map(r => RecordToFetch(partition, server, r))
      .toVector // strict: on Scala 2.12 Iterator.toSeq is a lazy Stream (filters run late)

  /**
   * getMeta of `partition` through the default route (on a map-range read, filtered on the
   * server to the `wanted` attempts); None (noted) when it fails.
   */
  private def listDefault(partition: Int, wanted: Set[Long]): Option[Iterable[RecordRef]] = {
    val server = coords.serverFor(partition)
    try {
      import scala.jdk.CollectionConverters._
      val client = clients.get(server)
      val key = coords.partitionKey(partition)
      val group = coords.namespaceOf(partition)
      val out = mutable.ArrayBuffer.empty[RecordRef]
      for (ns <- namespacesOf(partition)) {
        try {
          val meta =
            if (listOnlyWanted) client.getMetaOfTags(ns, key, wanted.toArray.sorted)
            else client.getMeta(ns, key)
          out ++= meta.records().asScala
        } catch {
          case _: RpmpNotFoundException if ns != group => // no chunk of it in this extent
        }
      }
      Some(out)
    } catch {
      case e: RpmpNotFoundException =>
        noteAll(partition, s"RPMP has no object for the partition ($e)")
        None
      case e: IOException =>
        clients.invalidateOn(server, e)
        noteAll(partition, s"getMeta on $server failed: $e")
        None
    }
  }

  private def noteAll(partition: Int, why: String): Unit =
    expected(partition).foreach(e => notes((partition, e.mapId)) = why)

  private def listRound0(): IndexedSeq[RecordToFetch] = {
    val out = mutable.ArrayBuffer.empty[RecordToFetch]
    for (partition <- expected.keys.toSeq.sorted) {
      val wanted = expected(partition).map(_.mapId).toSet
      listDefault(partition, wanted).foreach { refs =>
        out ++= select(partition, coords.serverFor(partition), refs, wanted, mutable.HashSet())
      }
    }
    out.toIndexedSeq
  }

  /**
   * Lists the partitions of `incomplete` again, in the group and every extent, on every
   * replica in cluster mode.
   */
  private def listRetry(incomplete: Seq[ExpectedOutput]): IndexedSeq[RecordToFetch] = {
    import scala.jdk.CollectionConverters._
    val out = mutable.ArrayBuffer.empty[RecordToFetch]
    for ((partition, outputs) <- incomplete.groupBy(_.partition).toSeq.sortBy(_._1)) {
      val wanted = outputs.map(_.mapId).toSet
      val seen = mutable.HashSet.empty[(Long, Long, Int)]
      val server = coords.serverFor(partition)
      val group = coords.namespaceOf(partition)
      // (namespace, its members); no members known: the default route lists them all.
      val members: Option[Seq[(String, Seq[Long])]] = if (!coords.clusterMode) None else {
        try Some(namespacesOf(partition).map { ns =>
          ns -> clients.get(server).describeNamespace(ns).replicaNodes().asScala
            .map(_.longValue).toSeq
        }) catch {
          case NonFatal(e) =>
            logWarning(s"describing $group and its extents failed: $e")
            None
        }
      }
      members match {
        case None =>
          listDefault(partition, wanted).foreach(refs =>
            out ++= select(partition, server, refs, wanted, seen))
        case Some(byNs) =>
          for ((ns, nodes) <- byNs; node <- nodes) {
            try {
              val refs = clients.get(server)
                .getMeta(ns, coords.partitionKey(partition), node).records().asScala
              out ++= select(partition, server, refs, wanted, seen)
            } catch {
              case _: RpmpNotFoundException if ns != group => // nothing of it in this extent
              case NonFatal(e) =>
                logWarning(s"getMeta of $ns/$partition on node ${NodeIds.hex(node)} failed: $e")
            }
          }
      }
    }
    out.toIndexedSeq
  }

  /** Outputs not proven whole by what the ledger accepted, with why. */
  private def incomplete(): Seq[(ExpectedOutput, String)] =
    expected.values.iterator.flatten.flatMap { e =>
      ledger.problem(e).map { p =>
        (e, notes.get((e.partition, e.mapId)).fold(p)(n => s"$p; last error: $n"))
      }
    }.toVector // strict, as in select

  /** All chunks consumed: done, or another round, or FetchFailed. */
  private def endOfRound(): Boolean = {
    val missing = incomplete()
    if (missing.isEmpty) {
      done = true
      close()
      return false
    }
    if (round >= conf.readRetries) {
      val (e, why) = missing.head
      throw fetchFailed(e, s"$why (after ${round + 1} reads; ${missing.size} output(s) " +
        "not proven whole)", null)
    }
    round += 1
    RpmpMetrics.fetchRetries.inc()
    RpmpMetrics.refetches.inc(missing.size)
    val wait = conf.readRetryWaitMs << math.min(round - 1, 16)
    logWarning(s"RPMP shuffle ${coords.shuffleId}: ${missing.size} map output(s) not whole " +
      s"(e.g. partition ${missing.head._1.partition} map ${missing.head._1.mapId}: " +
      s"${missing.head._2}); reading them again in $wait ms (round $round of ${conf.readRetries})")
    if (wait > 0) Thread.sleep(wait)
    beforeRetry(round)
    fetcher = newFetcher(listRetry(missing.map(_._1)))
    true
  }

  /** Takes the next chunk from the fetcher; false when it was dropped or is not readable. */
  private def openNext(): Boolean = {
    val (r, buf) = try fetcher.next() catch {
      case e: RecordReadFailure =>
        notes((e.record.partition, e.record.ref.tag)) = e.getMessage
        return false
    }
    buffer = buf
    val header = try {
      val h = ShuffleChunk.readHeader(buf.contents(), r.ref.length)
      if (!ledger.offer(r.partition, r.ref, h)) {
        closeChunk()
        return false // a duplicate
      }
      h
    } catch {
      case e: ChunkConflictException =>
        closeChunk()
        throw fetchFailed(expectedFor(r.partition, r.ref.tag), e.getMessage, e)
      case e: ChunkFormatException =>
        notes((r.partition, r.ref.tag)) = e.getMessage
        closeChunk()
        return false
    }
    readMetrics.incRemoteBytesRead(r.ref.length)
    readMetrics.incRemoteBlocksFetched(1)
    if (header.dataLength == 0) {
      closeChunk()
      return false
    }
    chunk = header
    yieldedFromChunk = false
    try {
      val data = buf.contents()
      data.position(data.position() + ShuffleChunk.HeaderSize)
      val blockId = ShuffleBlockId(coords.shuffleId, r.ref.tag, r.partition)
      stream = serializerManager.wrapStream(blockId, new ByteBufferStream(data))
      records = serializerInstance.deserializeStream(stream).asKeyValueIterator
      true
    } catch {
      case NonFatal(e) =>
        decodeFailed(e)
        false
    }
  }

  /** A chunk failed to decode: missing if nothing of it was returned yet, else FetchFailed. */
  private def decodeFailed(e: Throwable): Unit = {
    val h = chunk
    closeChunk()
    if (yieldedFromChunk) {
      throw fetchFailed(expectedFor(h.partition, h.mapId),
        s"chunk seq ${h.seq} failed to decode after some of its records were read: $e", e)
    }
    ledger.forget(h.partition, h.mapId, h.seq)
    notes((h.partition, h.mapId)) = s"chunk seq ${h.seq} failed to decode: $e"
  }

  private def closeChunk(): Unit = {
    records = null
    chunk = null
    val s = stream
    stream = null
    val b = buffer
    buffer = null
    try if (s != null) s.close() catch { case NonFatal(_) => }
    if (b != null) b.close()
  }

  override def hasNext: Boolean = {
    while (!done) {
      if (records != null) {
        val more = try records.hasNext catch {
          case NonFatal(e) =>
            decodeFailed(e)
            false
        }
        if (more) return true
        if (records != null) closeChunk()
      } else if (fetcher.hasNext) {
        openNext()
      } else if (!endOfRound()) {
        return false
      }
    }
    false
  }

  override def next(): (Any, Any) = {
    if (!hasNext) throw new NoSuchElementException("end of the RPMP shuffle records")
    try {
      val kv = records.next()
      yieldedFromChunk = true
      kv
    } catch {
      case NonFatal(e) =>
        decodeFailed(e) // throws when records of this chunk were returned already
        next()
    }
  }

  /** Frees the chunk being read and every read in flight. Idempotent; any path. */
  def close(): Unit = {
    closeChunk()
    if (fetcher != null) fetcher.close()
  }
}
